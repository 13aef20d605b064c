package paymentstest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// newStandardSecret returns a fresh whsec_ secret.
func newStandardSecret(t *testing.T) string {
	t.Helper()
	s, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	return s
}

// handled is one answer of the SDK's handler: the webhook-id the fake sent
// and what the handler did with the delivery.
type handled struct {
	webhookID string
	outcome   webhook.DeliveryOutcome
}

// standardReceiver is the SDK's webhook handler with a StandardVerifier, as
// a merchant runs it, behind a middleware that records each request as the
// fake sent it and may tamper with it or lose the handler's answer.
type standardReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []delivery        // as sent, before any tampering
	attempts map[string]int    // per webhook-id
	answers  []handled         // in the order the handler answered
	events   []*payments.Event // what the EventFunc was called with
	calls    map[string]int    // EventFunc calls per event id
}

// middleware may change r (its body, its headers) before the handler sees
// it; attempt counts the requests with r's webhook-id, from 1. It returns
// true to lose the answer: the handler processes the request, and the fake
// gets 503 instead of the handler's answer, as when a connection drops.
type middleware func(attempt int, r *http.Request) (loseAnswer bool)

func newStandardReceiver(t *testing.T, secrets []string, mw middleware) *standardReceiver {
	t.Helper()
	v, err := webhook.NewStandardVerifier(secrets)
	require.NoError(t, err)
	rc := &standardReceiver{attempts: map[string]int{}, calls: map[string]int{}}
	h := webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.events = append(rc.events, ev)
		rc.calls[ev.ID]++
		return nil
	}, webhook.WithDeliveryObserver(func(ctx context.Context, r *http.Request) (context.Context, func(webhook.DeliveryResult)) {
		id := r.Header.Get("X-Sent-Webhook-Id")
		return ctx, func(res webhook.DeliveryResult) {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			rc.answers = append(rc.answers, handled{id, res.Outcome})
		}
	}))
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		id := r.Header.Get(webhook.StandardIDHeader)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{body: body, header: r.Header.Clone()})
		rc.attempts[id]++
		n := rc.attempts[id]
		rc.mu.Unlock()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("X-Sent-Webhook-Id", id)
		if mw == nil || !mw(n, r) {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *standardReceiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func (rc *standardReceiver) handled() []handled {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]handled(nil), rc.answers...)
}

func (rc *standardReceiver) processed() ([]*payments.Event, map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	calls := map[string]int{}
	for k, v := range rc.calls {
		calls[k] = v
	}
	return append([]*payments.Event(nil), rc.events...), calls
}

// standardServer starts a fake that signs with the standard scheme and
// retries at once.
func standardServer(t *testing.T, url string, secrets ...string) (*paymentstest.Server, *payments.Client) {
	t.Helper()
	return start(t, paymentstest.WithWebhook(paymentstest.Webhook{Scheme: paymentstest.SchemeStandard}),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: url, Secrets: secrets}), paymentstest.WithWebhookRetryWait(time.Millisecond))
}

// makeEvents makes three events: recipient.created, recipient.verified and
// a triggered payment.completed.
func makeEvents(t *testing.T, c *payments.Client) {
	t.Helper()
	createRecipient(t, c, "")
	_, err := c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
}

// TestStandardSchemeDeliveries: every delivery carries webhook-id (the
// event's id), webhook-timestamp (the wall clock at sending, however far
// Advance moved the fake) and webhook-signature, and no Payments-Signature;
// the SDK's handler with a StandardVerifier accepts each one at the first
// attempt and gets the events in order.
func TestStandardSchemeDeliveries(t *testing.T) {
	s := newStandardSecret(t)
	rc := newStandardReceiver(t, []string{s}, nil)
	srv, c := standardServer(t, rc.URL, s)
	assert.Equal(t, paymentstest.SchemeStandard, srv.WebhookScheme())
	assert.Equal(t, []string{s}, srv.WebhookSecrets())

	before := time.Now()
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "300", "order-sw")
	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	srv.Advance(time.Hour) // business time only: signatures stay on the wall clock
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	waitDeliveries(t, srv)
	after := time.Now()

	log := srv.Deliveries()
	got := rc.deliveries()
	require.Len(t, log, 5)
	require.Len(t, got, 5, "one request per event: each accepted the first time")
	for i, d := range got {
		ev, err := payments.ParseEvent(d.body)
		require.NoError(t, err)
		assert.Equal(t, ev.ID, d.header.Get(webhook.StandardIDHeader), "webhook-id is the event's id")
		assert.Equal(t, log[i].EventID, ev.ID)
		assert.Empty(t, d.header.Get(webhook.SignatureHeader), "no Payments-Signature under the standard scheme")
		ts, err := strconv.ParseInt(d.header.Get(webhook.StandardTimestampHeader), 10, 64)
		require.NoError(t, err)
		assert.True(t, ts >= before.Unix()-1 && ts <= after.Unix()+1, "webhook-timestamp %d is the wall clock at sending", ts)
		assert.Equal(t, "application/json", d.header.Get("Content-Type"))

		require.Len(t, log[i].Attempts, 1)
		a := log[i].Attempts[0]
		assert.Equal(t, http.StatusOK, a.StatusCode)
		assert.Equal(t, paymentstest.SchemeStandard, a.Scheme)
		assert.Equal(t, d.header.Get(webhook.StandardSignatureHeader), a.Signature, "the log keeps the webhook-signature sent")
		assert.Equal(t, paymentstest.DeliveryDelivered, log[i].Status)
	}
	events, calls := rc.processed()
	want := []payments.EventType{payments.EventRecipientCreated, payments.EventRecipientVerified,
		payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentCompleted}
	require.Len(t, events, len(want))
	for i, ev := range events {
		assert.Equal(t, want[i], ev.Type)
		assert.Equal(t, 1, calls[ev.ID])
	}
	for _, h := range rc.handled() {
		assert.Equal(t, webhook.OutcomeProcessed, h.outcome)
	}
}

// TestStandardSchemeRetriesAreDeduplicated: the handler processes each
// event, but its answer is lost; the fake retries with the same webhook-id
// and the handler answers 200 without running the function again.
func TestStandardSchemeRetriesAreDeduplicated(t *testing.T) {
	s := newStandardSecret(t)
	rc := newStandardReceiver(t, []string{s}, func(attempt int, _ *http.Request) bool { return attempt == 1 })
	srv, c := standardServer(t, rc.URL, s)
	makeEvents(t, c)
	waitDeliveries(t, srv)

	log := srv.Deliveries()
	require.Len(t, log, 3)
	byID := map[string][]delivery{}
	for _, d := range rc.deliveries() {
		id := d.header.Get(webhook.StandardIDHeader)
		byID[id] = append(byID[id], d)
	}
	_, calls := rc.processed()
	for _, dl := range log {
		assert.Equal(t, paymentstest.DeliveryDelivered, dl.Status)
		require.Len(t, dl.Attempts, 2, "the lost answer was retried")
		assert.Equal(t, http.StatusServiceUnavailable, dl.Attempts[0].StatusCode)
		assert.Equal(t, http.StatusOK, dl.Attempts[1].StatusCode)
		sent := byID[dl.EventID]
		require.Len(t, sent, 2, "both attempts carry webhook-id %s", dl.EventID)
		assert.Equal(t, sent[0].body, sent[1].body)
		assert.Equal(t, 1, calls[dl.EventID], "processed once")
	}
	// Each event's retry runs on its own schedule, so the events may
	// interleave; per event, the first is processed and the retry dropped.
	outcomes := map[string][]webhook.DeliveryOutcome{}
	for _, h := range rc.handled() {
		outcomes[h.webhookID] = append(outcomes[h.webhookID], h.outcome)
	}
	require.Len(t, outcomes, 3)
	for id, got := range outcomes {
		assert.Equal(t, []webhook.DeliveryOutcome{webhook.OutcomeProcessed, webhook.OutcomeDuplicate}, got, "event %s", id)
	}
}

// TestStandardSchemeTamperingIsRefused: a first attempt changed on the way
// is refused with 401 and never processed; the fake's untouched retry is
// processed, once.
func TestStandardSchemeTamperingIsRefused(t *testing.T) {
	other := newStandardSecret(t)
	for name, tamper := range map[string]func(r *http.Request){
		"body": func(r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			b = bytes.Replace(b, []byte(`"event":"`), []byte(`"event": "`), 1)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		},
		"webhook-id": func(r *http.Request) {
			r.Header.Set(webhook.StandardIDHeader, "00000000-0000-4000-8000-000000000001")
		},
		"webhook-timestamp": func(r *http.Request) {
			ts, _ := strconv.ParseInt(r.Header.Get(webhook.StandardTimestampHeader), 10, 64)
			r.Header.Set(webhook.StandardTimestampHeader, strconv.FormatInt(ts+1, 10))
		},
		"signed with another secret": func(r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			ts, _ := strconv.ParseInt(r.Header.Get(webhook.StandardTimestampHeader), 10, 64)
			h, _ := webhook.SignStandard(r.Header.Get(webhook.StandardIDHeader), time.Unix(ts, 0), b, other)
			r.Header.Set(webhook.StandardSignatureHeader, h.Get(webhook.StandardSignatureHeader))
		},
		"no webhook-signature": func(r *http.Request) { r.Header.Del(webhook.StandardSignatureHeader) },
		"a Payments-Signature instead": func(r *http.Request) {
			r.Header.Del(webhook.StandardSignatureHeader)
			r.Header.Set(webhook.SignatureHeader, webhook.SignPayload([]byte("{}"), time.Now(), "whsec_x"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStandardSecret(t)
			rc := newStandardReceiver(t, []string{s}, func(attempt int, r *http.Request) bool {
				if attempt == 1 {
					tamper(r)
				}
				return false
			})
			srv, c := standardServer(t, rc.URL, s)
			makeEvents(t, c)
			waitDeliveries(t, srv)

			_, calls := rc.processed()
			for _, dl := range srv.Deliveries() {
				require.Len(t, dl.Attempts, 2, dl.Event)
				assert.Equal(t, http.StatusUnauthorized, dl.Attempts[0].StatusCode, "the tampered attempt is refused")
				assert.Equal(t, http.StatusOK, dl.Attempts[1].StatusCode, "the intact retry is accepted")
				assert.Equal(t, 1, calls[dl.EventID])
			}
			var refused int
			for _, h := range rc.handled() {
				if h.outcome == webhook.OutcomeRejectedSignature {
					refused++
				}
			}
			assert.Equal(t, 3, refused)
		})
	}
}

// TestStandardSchemeWrongSecret: a receiver with another secret refuses
// every attempt; the delivery fails after all its retries, never processed.
func TestStandardSchemeWrongSecret(t *testing.T) {
	rc := newStandardReceiver(t, []string{newStandardSecret(t)}, nil)
	srv, c := standardServer(t, rc.URL, newStandardSecret(t))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	dl := srv.Deliveries()[0]
	assert.Equal(t, paymentstest.DeliveryFailed, dl.Status)
	require.Len(t, dl.Attempts, 1+paymentstest.WebhookRetries)
	for _, a := range dl.Attempts {
		assert.Equal(t, http.StatusUnauthorized, a.StatusCode)
	}
	events, _ := rc.processed()
	assert.Empty(t, events)
}
