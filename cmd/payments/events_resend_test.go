package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// bodies is a receiver that keeps the bodies it gets.
type bodies struct {
	*httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func newBodies(t *testing.T) *bodies {
	b := &bodies{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.got = append(b.got, body)
		b.mu.Unlock()
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *bodies) all() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.got...)
}

func TestEventsResend(t *testing.T) {
	f := startFake(t, adminAPI())
	evs := triggerEvents(t, f, payments.EventPaymentCompleted)
	require.NoError(t, f.WaitForDeliveries(context.Background()))
	first := f.Deliveries()[0]

	code, stdout, stderr := runCLI(t, f.env, "events", "resend", evs[0].ID)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^Event `+regexp.QuoteMeta(evs[0].ID+" queued for delivery again to "+first.URL)+` \(stan \S+\)\n$`, stdout)
	require.NoError(t, f.WaitForDeliveries(context.Background()))
	log := f.Deliveries()
	require.Len(t, log, 2)
	assert.True(t, log[1].Redelivery)
	assert.Equal(t, paymentstest.DeliveryDelivered, log[1].Status)

	other := newBodies(t)
	code, stdout, stderr = runCLI(t, f.env, "events", "resend", evs[0].ID, "--to", other.URL+"/hooks")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "to "+other.URL+"/hooks")
	require.NoError(t, f.WaitForDeliveries(context.Background()))
	require.Len(t, other.all(), 1)
	assert.Equal(t, evs[0].Body, other.all()[0], "the same body, so the same event id")
	assert.Equal(t, first.URL, f.webhookURL(t), "the webhook URL stays")
}

func TestEventsResendRefusals(t *testing.T) {
	f := startFake(t, adminAPI())
	code, _, stderr := runCLI(t, f.env, "events", "resend", "no-such-event")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "HTTP 404 not_found")
	assert.Contains(t, stderr, `event \"no-such-event\"`)
	assert.NotContains(t, stderr, f.APIKey())

	for _, args := range [][]string{{"events", "resend"}, {"events", "resend", "a", "b"}, {"events", "resend", "a", "--to", "ftp://x"}} {
		code, _, _ = runCLI(t, f.env, args...)
		assert.Equal(t, exitUsage, code, args)
	}
	assert.Empty(t, f.Deliveries(), "nothing sent")

	plain := startFake(t) // no admin API, as the real service
	ev := triggerEvents(t, plain, payments.EventPaymentCompleted)[0]
	code, _, stderr = runCLI(t, plain.env, "events", "resend", ev.ID)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "needs payments-sandbox with its admin API")
}
