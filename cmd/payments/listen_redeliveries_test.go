package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestListenForwardsRedeliveries: an event redelivered in the sandbox (the
// dashboard's button, the admin API, events resend) reaches listen's
// receiver again, signed like a first delivery; one sent elsewhere with
// --to does not. Before, listen saw each event once in the event list and
// never forwarded a redelivery.
func TestListenForwardsRedeliveries(t *testing.T) {
	f := startFake(t, adminAPI())
	rc := newReceiver(t)
	l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms")
	secret := secretExport.FindStringSubmatch(l.stdout.String())[1]
	v, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	rc.verify(v)

	ev := triggerEvents(t, f, payments.EventPaymentCompleted)[0]
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[200]", ""))

	code, _, stderr := runCLI(t, f.env, "events", "resend", ev.ID)
	require.Equal(t, exitOK, code, stderr)
	l.waitFor(t, regexp.MustCompile(`(?m)  `+regexp.QuoteMeta(string(ev.Type)+"  "+ev.ID)+`  redelivery asked for in the sandbox$`))
	waitCount(t, l, deliveryLine(ev, rc.URL(), "[200]", ""), 2)
	assert.Equal(t, 2, rc.requests())

	// Sent elsewhere on purpose: listen leaves it; then one more to the
	// webhook URL, which the log lists after it.
	other := newBodies(t)
	code, _, stderr = runCLI(t, f.env, "events", "resend", ev.ID, "--to", other.URL)
	require.Equal(t, exitOK, code, stderr)
	f.admin(t, http.MethodPost, "events/"+ev.ID+"/redeliver", nil, nil)
	waitCount(t, l, deliveryLine(ev, rc.URL(), "[200]", ""), 3)
	assert.Equal(t, 3, rc.requests(), "the --to redelivery was not forwarded")
	assert.Equal(t, []string{ev.ID}, rc.processedIDs(), "the receiver processed it once, and dropped the copies")
	require.NoError(t, f.WaitForDeliveries(context.Background()))
	assert.Len(t, other.all(), 1)
}

// waitCount waits until re matches n lines of listen's stdout.
func waitCount(t *testing.T, l *listening, re *regexp.Regexp, n int) {
	t.Helper()
	l.waitFor(t, regexp.MustCompile(`(?s)`+strings.Repeat(`(?:`+re.String()+`).*`, n-1)+`(?:`+re.String()+`)`))
}
