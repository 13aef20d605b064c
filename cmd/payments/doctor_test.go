package main

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// sinkSecret is the secret startFake's deliveries are signed with.
const sinkSecret = "whsec_sink_secret"

// runDoctor runs payments doctor --json against a fake with the admin API
// (so that doctor points its deliveries at its own receiver) and the
// differences named, and returns the exit code and the rows by Topic.
func runDoctor(t *testing.T, differences ...string) (int, map[string]*row, string) {
	t.Helper()
	opts := []paymentstest.Option{adminAPI()}
	if len(differences) > 0 {
		opts = append(opts, paymentstest.WithDifferences(differences...))
	}
	f := startFake(t, opts...)
	code, stdout, stderr := runCLI(t, f.with(envWebhookSecret, sinkSecret), "doctor", "--json", "--wait", "20s")
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "stdout: %s\nstderr: %s", stdout, stderr)
	rows := map[string]*row{}
	for _, r := range doc.Rows {
		rows[r.Topic] = r
	}
	assert.Equal(t, code == exitOK, doc.AllHold)
	return code, rows, stderr
}

// TestDoctorHolds: against the fake as it is, every row doctor can probe
// holds, and the others say why not; exit 0.
func TestDoctorHolds(t *testing.T) {
	code, rows, stderr := runDoctor(t)
	assert.Equal(t, exitOK, code, stderr)
	require.Len(t, rows, len(topics))
	for _, tp := range topics {
		r := rows[tp.name]
		if tp.notProbed != "" {
			assert.Equal(t, unchecked, r.Result, tp.name)
			assert.Equal(t, tp.notProbed, r.Detail)
			continue
		}
		assert.Equal(t, holds, r.Result, "%s: %s", tp.name, r.Detail)
		assert.Empty(t, r.Override, tp.name)
	}
	assert.Contains(t, rows["Webhook signature"].Detail, "verifies with PAYMENTS_WEBHOOK_SECRET")
}

// TestDoctorDiffers: against the fake told to differ in one way, doctor
// names the difference in its row and exits 1.
func TestDoctorDiffers(t *testing.T) {
	for _, tc := range []struct {
		difference, topic, seen string
	}{
		{"confirm-path", "Confirm payment", "POST /payments/confirm answered HTTP 404"},
		{"quote-flat", "Quote in the initiate response", "the quote's fields are flat in data"},
		{"quote-renamed", "Quote in the initiate response", "members the SDK does not know: fee_amount, total"},
		{"html-errors", "Error body", "text/html body that is not the JSON envelope"},
		{"completed-at", "Payment fields", "members the SDK does not know: completed_at"},
		{"status-processing", "Payment statuses", "status processing is none of pending"},
		{"signature-header", "Webhook signature", "no Payments-Signature header; the delivery's headers: Accept-Encoding, Content-Length, Content-Type, User-Agent, X-Signature"},
		{"list-cursor", "List events", "data has no boolean has_more (it has next_cursor)"},
		{"minor-units", "Quote in the initiate response", "data.quote.amount is a number (10000), not a decimal string"},
		{"numeric-codes", "Error codes", "not a string"},
		{"field-errors", "Error body", `field errors in another shape: {"fields":[{"name":`},
		{"test-marker", "Test events", "reference is sandbox_test_"},
	} {
		t.Run(tc.difference, func(t *testing.T) {
			code, rows, stderr := runDoctor(t, tc.difference)
			assert.Equal(t, exitFailure, code)
			assert.Contains(t, stderr, "assumption(s) differ")
			r := rows[tc.topic]
			require.NotNil(t, r)
			assert.Equal(t, differs, r.Result, r.Detail)
			assert.Contains(t, r.Detail, tc.seen)
			assert.NotEmpty(t, r.Override)
			for _, other := range rows {
				if other.Result == differs && other.Topic != tc.topic {
					t.Logf("also differs: %s: %s", other.Topic, other.Detail)
				}
			}
		})
	}
}

// TestDoctorTestReferencePrefix: doctor's test-event marker is the one
// webhook.Triggered checks.
func TestDoctorTestReferencePrefix(t *testing.T) {
	ev := &payments.Event{Data: json.RawMessage(`{"reference":"` + testReferencePrefix + `1"}`)}
	assert.True(t, webhook.Triggered(ev), "reference prefix %q", testReferencePrefix)
}

// TestDoctorText: the rows as text, each with its result, and the override
// of a row that differs; exit 1.
func TestDoctorText(t *testing.T) {
	f := startFake(t, adminAPI(), paymentstest.WithDifferences("quote-renamed"))
	code, stdout, stderr := runCLI(t, f.with(envWebhookSecret, sinkSecret), "doctor")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, "payments doctor: the SDK's assumptions (docs/assumptions.md) against "+f.URL()+" (sandbox)\n")
	assert.Contains(t, stdout, "holds            Idempotency\n")
	assert.Contains(t, stdout, "DIFFERS          Quote in the initiate response\n")
	assert.Contains(t, stdout, "                   override: Payment.RawJSON()\n")
	assert.Contains(t, stdout, "could not check  Webhook retries\n")
	assert.Regexp(t, `\n\d+ hold, 1 differ, 6 could not be checked\.\n$`, stdout)
	assert.Equal(t, "payments: doctor: 1 assumption(s) differ from what the service answered: see the rows above and docs/when-the-service-differs.md\n", stderr)
	assert.NotContains(t, stdout, f.APIKey())
}

func TestDoctorProductionSign(t *testing.T) {
	jwt := func(claims string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
	}
	for _, tc := range []struct{ key, url, want string }{
		{"k", "http://127.0.0.1:8765", ""},
		{"k", "http://localhost:8765", ""},
		{"k", "https://sandbox.payments.example", ""},
		{"k", "https://api-sandbox.payments.example/v1", ""},
		{"k", "https://api.test.payments.example", ""},
		{"k", "https://staging-api.payments.example", ""},
		{jwt(`{"env":"sandbox"}`), "https://sandbox.payments.example", ""},
		{"k", "https://api.payments.example", "the host api.payments.example is not loopback and no label of it says sandbox, test or staging"},
		{"k", "https://10.0.0.5", "the host 10.0.0.5 is not loopback and no label of it says sandbox, test or staging"},
		{"sk_live_abc", "http://127.0.0.1:8765", "the API key starts with sk_live_"},
		{"live_abc", "https://sandbox.payments.example", "the API key starts with live_"},
		{jwt(`{"env":"production"}`), "http://127.0.0.1:1", "the API key's env claim is production"},
		{jwt(`{"mode":"live"}`), "http://127.0.0.1:1", "the API key's mode claim is live"},
		{jwt(`{"livemode":true}`), "http://127.0.0.1:1", "the API key's livemode claim is true"},
	} {
		assert.Equal(t, tc.want, productionSign(tc.key, tc.url), "%s %s", tc.key, tc.url)
	}
}

// TestDoctorRefusesProduction: a production key is refused (exit 2,
// nothing sent) without --production; with it, doctor runs only the
// probes that create nothing: no POST reaches the service.
func TestDoctorRefusesProduction(t *testing.T) {
	f := startFake(t, paymentstest.WithAPIKey("sk_live_doctor_test_key"), adminAPI())
	code, stdout, stderr := runCLI(t, f.env, "doctor")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "payments: doctor refuses a production environment (the API key starts with sk_live_): it creates a recipient and a payment. "+
		"Point it at a sandbox, or pass --production to run only the probes that create nothing\n", stderr)
	assert.Empty(t, f.Requests(), "nothing is sent")

	code, stdout, stderr = runCLI(t, f.env, "doctor", "--production", "--json")
	assert.Equal(t, exitOK, code, stderr)
	for _, r := range f.Requests() {
		assert.Equal(t, "GET", r.Method, r.Path)
	}
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.True(t, doc.Production)
	rows := map[string]*row{}
	for _, r := range doc.Rows {
		rows[r.Topic] = r
	}
	for _, tp := range topics {
		switch {
		case tp.creates:
			assert.Equal(t, unchecked, rows[tp.name].Result, tp.name)
			assert.Contains(t, rows[tp.name].Detail, "--production", tp.name)
		case tp.notProbed == "":
			assert.Equal(t, holds, rows[tp.name].Result, "%s: %s", tp.name, rows[tp.name].Detail)
		}
	}
	assert.NotContains(t, stdout, "sk_live_doctor_test_key")
}

// TestDoctorNoReceiver: a service without the sandbox's admin API and no
// --receive: the signature cannot be checked, and the row says how.
func TestDoctorNoReceiver(t *testing.T) {
	f := startFake(t)
	code, stdout, _ := runCLI(t, f.env, "doctor", "--json")
	assert.Equal(t, exitOK, code)
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	for _, r := range doc.Rows {
		if r.Topic == "Webhook signature" {
			assert.Equal(t, unchecked, r.Result)
			assert.Contains(t, r.Detail, "run doctor with --receive ADDR")
		}
		if r.Topic == "Webhook body" || r.Topic == "Test events" {
			assert.Equal(t, holds, r.Result, "checked on the listed events: %s", r.Detail)
		}
	}
}

func TestDoctorUsage(t *testing.T) {
	f := startFake(t)
	code, _, stderr := runCLI(t, f.env, "doctor", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `doctor takes no arguments (got "extra"`)
	code, stdout, _ := runCLI(t, nil, "doctor", "--help")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "Usage: payments doctor [--json]"))
	code, _, stderr = runCLI(t, f.with(envAPIKey, ""), "doctor")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "PAYMENTS_API_KEY is not set")
}

// TestDoctorScrub: what doctor prints from the service has the key, the
// webhook secret and long digit runs masked, UUIDs whole.
func TestDoctorScrub(t *testing.T) {
	d := newDoctor(&doctorConfig{key: "eyJkey.payload.sig", secrets: []string{"pssec_abcdef"}})
	assert.Equal(t, "key [redacted] secret [redacted] account ****6789 bvn ****8901 id 0b6c6a0e-1234-4000-8000-123456789012",
		d.scrub("key eyJkey.payload.sig secret pssec_abcdef account 0123456789 bvn 12345678901 id 0b6c6a0e-1234-4000-8000-123456789012"))
	assert.Equal(t, "Bearer [redacted]", d.scrub("Bearer abc.def"))
	assert.Equal(t, `"line\nforged"`, d.scrub("line\nforged"))
}

// TestDoctorTopicsMatchAssumptions: doctor's rows are docs/assumptions.md's,
// in its order, with its overrides, and every row of the table names its
// doctor probe or why it cannot be probed.
func TestDoctorTopicsMatchAssumptions(t *testing.T) {
	b, err := os.ReadFile("../../docs/assumptions.md")
	require.NoError(t, err)
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Topic ") {
			continue
		}
		name := strings.TrimSpace(cells[1])
		names = append(names, name)
		probe := strings.TrimSpace(cells[4])
		require.NotEmpty(t, probe, "%s names no doctor probe", name)
		for _, tp := range topics {
			if tp.name == name {
				assert.Equal(t, strings.ReplaceAll(strings.TrimSpace(cells[3]), "`", ""), tp.override, name)
				assert.Equal(t, tp.notProbed != "", strings.HasPrefix(probe, "Cannot be probed"), name)
			}
		}
	}
	var want []string
	for _, tp := range topics {
		want = append(want, tp.name)
	}
	assert.Equal(t, want, names)
}

// TestDoctorReceive: against a service whose webhook URL points at
// --receive (no sandbox admin API), doctor catches and verifies the
// deliveries there.
func TestDoctorReceive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://" + addr + "/webhooks", Secrets: []string{sinkSecret}}))
	t.Cleanup(srv.Close)
	env := map[string]string{envAPIKey: srv.APIKey(), envBaseURL: srv.URL(), envWebhookSecret: sinkSecret}
	code, stdout, stderr := runCLI(t, env, "doctor", "--json", "--receive", addr)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "carries Payments-Signature and verifies with PAYMENTS_WEBHOOK_SECRET")
}
