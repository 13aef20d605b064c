package paymentstest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// sdkReceiver is the SDK's own webhook handler, verifying signatures on
// the wall clock with the default tolerance, as a merchant runs it. It
// records the events its function got.
type sdkReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []*payments.Event
}

func newSDKReceiver(t *testing.T) *sdkReceiver {
	t.Helper()
	v, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	rc := &sdkReceiver{}
	h := webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.events = append(rc.events, ev)
		return nil
	})
	rc.Server = httptest.NewServer(h)
	t.Cleanup(rc.Close)
	return rc
}

func (rc *sdkReceiver) got() []*payments.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*payments.Event(nil), rc.events...)
}

// checkVerifiedOnWallClock asserts that every delivery went through on its
// first attempt, that the SDK's handler got each event once, and that each
// signature's t is the wall-clock time of sending, while At and created_at
// keep the server's time.
func checkVerifiedOnWallClock(t *testing.T, srv *paymentstest.Server, rc *sdkReceiver, wantEvents int) {
	t.Helper()
	waitDeliveries(t, srv)
	log := srv.Deliveries()
	require.Len(t, log, wantEvents)
	got := rc.got()
	require.Len(t, got, wantEvents, "the receiver's function got every event")
	for i, d := range log {
		assert.Equal(t, paymentstest.DeliveryDelivered, d.Status, "%s", d.Event)
		require.Len(t, d.Attempts, 1, "%s: accepted the first time, not retried", d.Event)
		a := d.Attempts[0]
		assert.Equal(t, http.StatusOK, a.StatusCode)
		assert.Equal(t, d.EventID, got[i].ID)

		ts, _, _ := strings.Cut(strings.TrimPrefix(a.Signature, "t="), ",")
		secs, err := strconv.ParseInt(ts, 10, 64)
		require.NoError(t, err, a.Signature)
		signed := time.Unix(secs, 0)
		assert.WithinDuration(t, time.Now(), signed, time.Minute, "%s: t is the wall clock", d.Event)
		assert.True(t, got[i].CreatedAt.Equal(d.CreatedAt), "%s: created_at is the server's time", d.Event)
		assert.True(t, a.At.Sub(signed) > 2*time.Minute || signed.Sub(a.At) > 2*time.Minute,
			"%s: At (%s) stays the server's time, far from the wall clock (%s)", d.Event, a.At, signed)
	}
}

// TestWebhookSignedOnWallClockAfterAdvance: moving the server's clock past
// the signature tolerance leaves deliveries verifiable by a receiver on
// real time.
func TestWebhookSignedOnWallClockAfterAdvance(t *testing.T) {
	rc := newSDKReceiver(t)
	srv, c := start(t, fastHooks(rc.URL)...)
	srv.Advance(webhook.DefaultSignatureTolerance + time.Second)
	createRecipient(t, c, "") // recipient.created, recipient.verified
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	srv.Advance(time.Hour)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), dec("5000.00"), "")
	require.NoError(t, err)
	checkVerifiedOnWallClock(t, srv, rc, 4)
	assert.WithinDuration(t, time.Now().Add(time.Hour+webhook.DefaultSignatureTolerance), srv.Deliveries()[3].CreatedAt, time.Minute)
}

// TestWebhookSignedOnWallClockAdminAdvance: the same through the admin
// API, as the sandbox's users move the clock.
func TestWebhookSignedOnWallClockAdminAdvance(t *testing.T) {
	rc := newSDKReceiver(t)
	srv, c := startAdmin(t, append(fastHooks(rc.URL), paymentstest.WithClock(time.Now))...)
	res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 301}`, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	createRecipient(t, c, "")
	_, err := c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	checkVerifiedOnWallClock(t, srv, rc, 3)
}

// TestWebhookSignedOnWallClockWithFixedClock: a server on a frozen clock
// years in the past still signs with the time of sending.
func TestWebhookSignedOnWallClockWithFixedClock(t *testing.T) {
	rc := newSDKReceiver(t)
	fixed := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithClock(func() time.Time { return fixed }))...)
	createRecipient(t, c, "")
	checkVerifiedOnWallClock(t, srv, rc, 2)
	assert.True(t, srv.Deliveries()[0].Attempts[0].At.Equal(fixed))
}
