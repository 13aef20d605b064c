package main

import (
	"encoding/json"
	"fmt"
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
	assert.Equal(t, code == exitOK, doc.AllHold && doc.Stopped == "")
	return code, rows, stderr
}

// TestDoctorHolds: against the fake as it is, every row doctor can probe
// holds, and the others say why not (the fake has no rate limit, so no 429
// to read); exit 0. The payment doctor confirms is followed to its end.
func TestDoctorHolds(t *testing.T) {
	code, rows, stderr := runDoctor(t)
	assert.Equal(t, exitOK, code, stderr)
	require.Len(t, rows, len(topics))
	for _, tp := range topics {
		r := rows[tp.name]
		switch {
		case tp.notProbed != "":
			assert.Equal(t, unchecked, r.Result, tp.name)
			assert.Equal(t, tp.notProbed, r.Detail)
		case tp.name == "Retryable answers":
			assert.Equal(t, unchecked, r.Result, r.Detail)
			assert.Contains(t, r.Detail, fmt.Sprintf("a burst of %d GET requests included", burstSize))
		default:
			assert.Equal(t, holds, r.Result, "%s: %s", tp.name, r.Detail)
			assert.Empty(t, r.Override, tp.name)
		}
	}
	assert.Contains(t, rows["Webhook signature"].Detail, "verifies with PAYMENTS_WEBHOOK_SECRET")
	assert.Contains(t, rows["Confirm payment"].Detail, "confirmed the probe payment: status completed")
	assert.Contains(t, rows["Payment statuses"].Detail, "the confirmed payment answered completed, then payment.completed came for it")
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
	assert.Contains(t, stdout, "payments doctor: the SDK's assumptions (docs/assumptions.md) against "+f.URL()+" (sandbox: loopback)\n")
	assert.Contains(t, stdout, "holds            Idempotency\n")
	assert.Contains(t, stdout, "DIFFERS          Quote in the initiate response\n")
	assert.Contains(t, stdout, "                   override: Payment.RawJSON()\n")
	assert.Contains(t, stdout, "could not check  Webhook retries\n")
	assert.Regexp(t, `\n\d+ hold, 1 differ, 6 could not be checked\.\n$`, stdout)
	assert.Equal(t, "payments: doctor: 1 assumption(s) differ from what the service answered: see the rows above and docs/when-the-service-differs.md\n", stderr)
	assert.NotContains(t, stdout, f.APIKey())
}

// TestDoctorRefusesProduction: a production key is refused writes (exit 2,
// nothing sent) even on loopback; with --production, doctor sends GET
// requests only, and says so in each row it skips.
func TestDoctorRefusesProduction(t *testing.T) {
	f := startFake(t, paymentstest.WithAPIKey("sk_live_doctor_test_key"), adminAPI())
	rec := newRecorder(t, f.URL(), nil)
	env := f.with(envBaseURL, rec.URL)
	code, stdout, stderr := runCLI(t, env, "doctor")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "payments: the API key looks like a production key (it starts with sk_live_): doctor creates and confirms a payment, "+
		"so it sends no write with it. Use the sandbox's API key, or pass --production to send GET requests only. Nothing was sent\n", stderr)
	assert.Empty(t, rec.seen(), "nothing is sent")

	code, stdout, stderr = runCLI(t, env, "doctor", "--production", "--json")
	assert.Equal(t, exitOK, code, stderr)
	require.NotEmpty(t, rec.seen())
	assert.Empty(t, rec.writes(), "--production sends GET requests only")
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.True(t, doc.Production)
	assert.False(t, doc.Writes)
	rows := map[string]*row{}
	for _, r := range doc.Rows {
		rows[r.Topic] = r
	}
	for _, tp := range topics {
		switch {
		case tp.creates:
			assert.Equal(t, unchecked, rows[tp.name].Result, tp.name)
			assert.Contains(t, rows[tp.name].Detail, "--production", tp.name)
		case tp.name == "Retryable answers":
			assert.Equal(t, "no answer of the 3 doctor saw was a 429", rows[tp.name].Detail, "no burst in production")
		case tp.notProbed == "":
			assert.Equal(t, holds, rows[tp.name].Result, "%s: %s", tp.name, rows[tp.name].Detail)
		}
	}
	assert.NotContains(t, stdout, "sk_live_doctor_test_key")
}

// TestDoctorNoReceiver: a sandbox without the admin API and no --receive:
// doctor cannot keep its events from the webhook URL set there (perhaps
// the merchant's receiver), so it creates nothing and says how to give it
// a receiver.
func TestDoctorNoReceiver(t *testing.T) {
	f := startFake(t)
	rec := newRecorder(t, f.URL(), nil)
	code, stdout, _ := runCLI(t, f.with(envBaseURL, rec.URL), "doctor", "--json")
	assert.Equal(t, exitOK, code)
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	for _, r := range doc.Rows {
		for _, tp := range topics {
			if tp.name == r.Topic && tp.creates {
				assert.Equal(t, unchecked, r.Result, r.Topic)
				assert.Contains(t, r.Detail, "Run doctor with --receive ADDR", r.Topic)
			}
		}
	}
	assert.Equal(t, []string{"GET /_sandbox/webhook-url"}, rec.matching("GET /_sandbox/"), "only the look for the admin API")
	assert.Empty(t, rec.writes())
}

func TestDoctorUsage(t *testing.T) {
	f := startFake(t)
	code, _, stderr := runCLI(t, f.env, "doctor", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `doctor takes no arguments (got "extra"`)
	code, stdout, _ := runCLI(t, nil, "doctor", "--help")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "Usage: payments doctor [--sandbox-host HOST | --production] [--json]"))
	code, _, stderr = runCLI(t, f.with(envAPIKey, ""), "doctor")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "PAYMENTS_API_KEY is not set")
}

// TestDoctorScrub: what doctor prints from the service has the key, the
// webhook secret and long digit runs masked, UUIDs whole.
func TestDoctorScrub(t *testing.T) {
	d := newDoctor(&doctorConfig{key: "eyJkey.payload.sig", secrets: []string{"pssec_abcdef"}}, nil)
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

// TestDoctorReportRevisesAPrintedRow: a row printed as decided that a
// later answer changes is printed again, marked revised, and the JSON
// document has its final result: a difference is never lost to streaming.
func TestDoctorReportRevisesAPrintedRow(t *testing.T) {
	var out strings.Builder
	r := newReport()
	r.out = &out
	r.hold("Base URL", "the service answers the envelope")
	r.decide("Base URL")
	r.hold("Base URL", "another hold changes nothing")
	r.differ("Base URL", "a later answer: the envelope's stan is a number")
	r.finish("")
	assert.Equal(t, 1, strings.Count(out.String(), "holds            Base URL\n"))
	assert.Contains(t, out.String(), "DIFFERS          Base URL (revised)\n                   a later answer: the envelope's stan is a number\n                   override: WithBaseURL\n")
	assert.Equal(t, differs, r.index["Base URL"].Result)
	assert.Equal(t, "WithBaseURL", r.index["Base URL"].Override)
}
