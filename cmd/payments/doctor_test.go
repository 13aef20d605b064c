package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// sinkSecret is the secret startFake's deliveries are signed with.
const sinkSecret = "whsec_sink_secret"

// runDoctor runs payments doctor --json against a fake with the admin API
// (so that doctor points its deliveries at its own receiver) and the
// differences named, and returns the exit code and the rows by Topic.
func runDoctor(t *testing.T, differences ...string) (int, map[string]*row, string) {
	t.Helper()
	opts := []paymentstest.Option{paymentstest.WithAdminAPI()}
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

func TestDoctorTestReferencePrefix(t *testing.T) {
	assert.Equal(t, paymentstest.TriggeredReferencePrefix, testReferencePrefix)
}

var _ = strings.Contains
