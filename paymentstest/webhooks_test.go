package paymentstest_test

import (
	"context"
	"encoding/json"
	"io"
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
	"github.com/paymentsapi/payments-go/internal/eventkind"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

const secret = "whsec_test"

type delivery struct {
	body   []byte
	header http.Header
}

// receiver is a webhook endpoint that records what it gets and answers with
// status(n) for the n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	status func(n int) int
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	t.Helper()
	rc := &receiver{status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{body: body, header: r.Header.Clone()})
		n := len(rc.got)
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.status != nil {
			code = rc.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func fastHooks(url string) []paymentstest.Option {
	return []paymentstest.Option{paymentstest.WithWebhook(paymentstest.Webhook{URL: url, Secrets: []string{secret}}), paymentstest.WithWebhookRetryWait(time.Millisecond)}
}

func waitDeliveries(t *testing.T, srv *paymentstest.Server) {
	t.Helper()
	require.NoError(t, srv.WaitForDeliveries(ctx(t)))
}

// checkSigned recomputes the signature of a delivery from its own t.
func checkSigned(t *testing.T, d delivery, secrets ...string) {
	t.Helper()
	sig := d.header.Get(webhook.SignatureHeader)
	ts, _, ok := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
	require.True(t, ok, "header %q", sig)
	secs, err := strconv.ParseInt(ts, 10, 64)
	require.NoError(t, err)
	assert.Equal(t, webhook.SignPayload(d.body, time.Unix(secs, 0), secrets...), sig)
	assert.Equal(t, "application/json", d.header.Get("Content-Type"))
}

func TestWebhookDeliveries(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "300", "order-h")
	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	in, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("99.99"), "NGN")
	require.NoError(t, err)
	waitDeliveries(t, srv)

	want := []payments.EventType{
		payments.EventRecipientCreated, payments.EventRecipientVerified, payments.EventPaymentInitiated,
		payments.EventPaymentCompleted, payments.EventVirtualAccountCreated, payments.EventVirtualAccountPaymentReceived,
	}
	got := rc.deliveries()
	require.Len(t, got, len(want))
	for i, d := range got {
		checkSigned(t, d, secret)
		ev, err := webhook.ConstructEvent(d.body, d.header, secret)
		require.NoError(t, err, "the SDK's own verification accepts the delivery")
		assert.Equal(t, want[i], ev.Type, "in the order they happened")
		assert.False(t, ev.CreatedAt.IsZero())

		var shape map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(d.body, &shape))
		assert.Len(t, shape, 4, "exactly id, event, created_at and data")
	}
	ev, _ := payments.ParseEvent(got[3].body)
	paid, err := ev.Payment()
	require.NoError(t, err)
	assert.Equal(t, p.ID, paid.ID)
	assert.Equal(t, payments.PaymentStatusCompleted, paid.Status)
	ev, _ = payments.ParseEvent(got[5].body)
	vp, err := ev.VirtualAccountPayment()
	require.NoError(t, err)
	assert.Equal(t, in.Reference, vp.Reference)

	log := srv.Deliveries()
	require.Len(t, log, len(want))
	for i, d := range log {
		assert.Equal(t, paymentstest.DeliveryDelivered, d.Status)
		require.Len(t, d.Attempts, 1)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		assert.Equal(t, got[i].body, d.Body)
		assert.Equal(t, got[i].header.Get(webhook.SignatureHeader), d.Attempts[0].Signature)
		assert.Equal(t, rc.URL, d.URL)
	}
	events := srv.Events()
	require.Len(t, events, len(want))
	assert.Equal(t, events[3].ID, log[3].EventID)
	assert.JSONEq(t, string(paid.RawJSON()), string(events[3].Data))
}

func TestWebhookRetries(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	srv, c := start(t, fastHooks(rc.URL)...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)

	log := srv.Deliveries()
	require.Len(t, log, 1)
	d := log[0]
	assert.Equal(t, paymentstest.DeliveryDelivered, d.Status)
	require.Len(t, d.Attempts, 3)
	assert.Equal(t, []int{500, 500, 204}, []int{d.Attempts[0].StatusCode, d.Attempts[1].StatusCode, d.Attempts[2].StatusCode})
	got := rc.deliveries()
	require.Len(t, got, 3)
	for _, g := range got {
		assert.Equal(t, got[0].body, g.body, "every attempt sends the same body")
		checkSigned(t, g, secret)
	}
}

func TestWebhookGivesUpAfterFourRetries(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	const base = 10 * time.Millisecond
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}), paymentstest.WithWebhookRetryWait(base))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	d := srv.Deliveries()[0]
	assert.Equal(t, paymentstest.DeliveryFailed, d.Status)
	assert.Len(t, d.Attempts, 1+paymentstest.WebhookRetries)
	assert.Len(t, rc.deliveries(), 5)
	// The waits double: 10, 20, 40, 80 ms (times are cut to milliseconds).
	wait := base
	for i := 1; i < len(d.Attempts); i++ {
		assert.GreaterOrEqual(t, d.Attempts[i].At.Sub(d.Attempts[i-1].At), wait-time.Millisecond, "wait before attempt %d", i+1)
		wait *= 2
	}
}

func TestWebhookConnectionErrorsAndTimeouts(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	srv, c := start(t, fastHooks(deadURL)...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	d := srv.Deliveries()[0]
	assert.Equal(t, paymentstest.DeliveryFailed, d.Status)
	require.Len(t, d.Attempts, 5)
	assert.Zero(t, d.Attempts[0].StatusCode)
	assert.NotEmpty(t, d.Attempts[0].Error)

	srv2, c2 := start(t, append(fastHooks(stalledReceiver(t)), paymentstest.WithWebhookTimeout(20*time.Millisecond))...)
	_, err = c2.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv2)
	assert.Equal(t, paymentstest.DeliveryFailed, srv2.Deliveries()[0].Status)
}

func TestTriggerEvent(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	for _, kind := range eventkind.All() {
		res, err := c.Webhooks.Trigger(ctx(t), kind)
		require.NoError(t, err, kind)
		assert.Equal(t, http.StatusOK, res.LastResponse().StatusCode)
		var data struct{ ID, Event string }
		require.NoError(t, json.Unmarshal(res.Data, &data))
		assert.Equal(t, string(kind), data.Event)
	}
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, len(eventkind.All()))
	for i, d := range got {
		ev, err := webhook.ConstructEvent(d.body, d.header, secret)
		require.NoError(t, err)
		assert.Equal(t, eventkind.All()[i], ev.Type)
		require.NotEmpty(t, ev.Data)
		switch {
		case strings.HasPrefix(string(ev.Type), "payment."):
			_, err = ev.Payment()
		case strings.HasPrefix(string(ev.Type), "recipient."):
			_, err = ev.Recipient()
		case ev.Type == payments.EventVirtualAccountPaymentReceived:
			_, err = ev.VirtualAccountPayment()
		case strings.HasPrefix(string(ev.Type), "virtual_account."):
			_, err = ev.VirtualAccount()
		default:
			var m map[string]any
			err = ev.DecodeData(&m)
		}
		assert.NoError(t, err, "sample data of %s decodes", ev.Type)
	}
	assert.Empty(t, srv.Payments(), "test events store nothing")

	_, err := c.Webhooks.Trigger(ctx(t), "payment.exploded")
	require.ErrorIs(t, err, payments.ErrUnprocessable)

	require.NoError(t, srv.SetWebhook(""))
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "webhook_not_configured", string(apiErr.Code))
}

func TestSetWebhookAndRotation(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, paymentstest.WithWebhookRetryWait(time.Millisecond))
	createRecipient(t, c, "")
	assert.Len(t, srv.Events(), 2, "events are recorded without a webhook")
	assert.Empty(t, srv.Deliveries())

	require.Error(t, srv.SetWebhook("mailto:x@example.com", secret))
	require.NoError(t, srv.SetWebhook(rc.URL, "old", "new"))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, 2, strings.Count(got[0].header.Get(webhook.SignatureHeader), "v1="), "one signature per secret")
	_, err = webhook.ConstructEvent(got[0].body, got[0].header, "new")
	require.NoError(t, err)
	_, err = webhook.ConstructEvent(got[0].body, got[0].header, "old")
	require.NoError(t, err)
	_, err = webhook.ConstructEvent(got[0].body, got[0].header, "other")
	require.ErrorIs(t, err, webhook.ErrNoMatchingSignature)
}

func TestWaitForDeliveries(t *testing.T) {
	slow := stalledReceiver(t)
	srv, c := start(t, fastHooks(slow)...)
	assert.NoError(t, srv.WaitForDeliveries(ctx(t)), "nothing queued")
	createRecipient(t, c, "")
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, srv.WaitForDeliveries(short), context.DeadlineExceeded)

	go func() {
		time.Sleep(20 * time.Millisecond)
		srv.Close()
	}()
	require.ErrorIs(t, srv.WaitForDeliveries(ctx(t)), paymentstest.ErrClosed)
	for _, d := range srv.Deliveries() {
		assert.Equal(t, paymentstest.DeliveryPending, d.Status, "cut short by Close")
	}
}
