package paymentsotel_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/webhook"
)

const hookSecret = "whsec_paymentsotel_test"

// delivery is a signed webhook request for an event of kind typ.
func delivery(t *testing.T, id string, typ payments.EventType, secret string) *http.Request {
	t.Helper()
	body := []byte(`{"id":"` + id + `","event":"` + string(typ) + `","created_at":"2025-03-01T10:00:00Z",` +
		`"data":{"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1","status":"completed","amount":"7319.46","currency":"NGN"}}`)
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Payments-Signature", webhook.SignPayload(body, time.Now(), secret))
	return req
}

// failingStore is a webhook.ClaimStore that is down.
type failingStore struct{}

func (failingStore) Claim(context.Context, string) (webhook.Claim, error) {
	return webhook.Claim{}, errors.New("store down")
}
func (failingStore) Renew(_ context.Context, c webhook.Claim) (webhook.Claim, error) {
	return c, nil
}
func (failingStore) Complete(context.Context, webhook.Claim) error { return nil }
func (failingStore) Release(context.Context, webhook.Claim) error  { return nil }

// TestWebhookDeliverySpan: a delivery is a SERVER span that continues the
// sender's trace, carries the event's type, id and outcome, and is the
// parent of the EventFunc's work.
func TestWebhookDeliverySpan(t *testing.T) {
	r := newRig(t)
	verifier, err := webhook.NewSignatureVerifier([]string{hookSecret})
	require.NoError(t, err)
	var inFunc trace.SpanContext
	h := webhook.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		inFunc = trace.SpanContextFromContext(ctx)
		return nil
	}, r.inst.HandlerOption())

	id := uuid.NewString()
	req := delivery(t, id, payments.EventPaymentCompleted, hookSecret)
	const remoteTrace, remoteSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req.Header.Set("traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code)

	s := r.one(t, paymentsotel.SpanWebhook)
	assert.Equal(t, trace.SpanKindServer, s.SpanKind())
	assert.Equal(t, remoteTrace, s.SpanContext().TraceID().String())
	assert.Equal(t, remoteSpan, s.Parent().SpanID().String())
	assert.True(t, s.Parent().IsRemote())
	assert.Equal(t, s.SpanContext(), inFunc, "the EventFunc runs under the delivery's span")
	assert.Equal(t, codes.Unset, s.Status().Code)
	assert.Equal(t, map[string]string{
		"http.request.method":         "POST",
		"http.response.status_code":   "200",
		"payments.webhook.outcome":    "processed",
		"payments.webhook.event_type": "payment.completed",
		"payments.webhook.event_id":   id,
	}, attrs(s))
}

// TestWebhookOutcomes: each outcome is counted by outcome and event type,
// and only the handler's own failures are errors.
func TestWebhookOutcomes(t *testing.T) {
	r := newRig(t)
	verifier, err := webhook.NewSignatureVerifier([]string{hookSecret})
	require.NoError(t, err)
	ok := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil }, r.inst.HandlerOption())
	failing := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error {
		return errors.New("database down")
	}, r.inst.HandlerOption())
	storeDown := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil },
		r.inst.HandlerOption(), webhook.WithClaimStore(failingStore{}))

	serve := func(h http.Handler, req *http.Request) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	id := uuid.NewString()
	require.Equal(t, 200, serve(ok, delivery(t, id, payments.EventPaymentCompleted, hookSecret)))
	require.Equal(t, 200, serve(ok, delivery(t, id, payments.EventPaymentCompleted, hookSecret)))
	require.Equal(t, 401, serve(ok, delivery(t, uuid.NewString(), payments.EventPaymentCompleted, "whsec_wrong")))
	require.Equal(t, 500, serve(failing, delivery(t, uuid.NewString(), payments.EventRecipientCreated, hookSecret)))
	require.Equal(t, 503, serve(storeDown, delivery(t, uuid.NewString(), payments.EventRecipientCreated, hookSecret)))

	assert.Equal(t, map[string]int64{
		"payments.webhook.event_type=payment.completed,payments.webhook.outcome=processed":         1,
		"payments.webhook.event_type=payment.completed,payments.webhook.outcome=duplicate":         1,
		"payments.webhook.outcome=rejected_signature":                                              1,
		"payments.webhook.event_type=recipient.created,payments.webhook.outcome=failed":            1,
		"payments.webhook.event_type=recipient.created,payments.webhook.outcome=store_unavailable": 1,
	}, sumValues(t, r.metric(t, paymentsotel.MetricWebhookDeliveries)))

	type result struct {
		code    codes.Code
		errType string
	}
	got := map[string]result{}
	for _, s := range r.named(paymentsotel.SpanWebhook) {
		a := attrs(s)
		got[a["payments.webhook.outcome"]] = result{s.Status().Code, a["error.type"]}
	}
	assert.Equal(t, map[string]result{
		"processed":          {codes.Unset, ""},
		"duplicate":          {codes.Unset, ""},
		"rejected_signature": {codes.Unset, ""},
		"failed":             {codes.Error, "500"},
		"store_unavailable":  {codes.Error, "503"},
	}, got)
}

// TestWebhookUnderAServerSpan: when the server already made a span for the
// request, the delivery's span is an INTERNAL child of it and the headers'
// trace context is not read again.
func TestWebhookUnderAServerSpan(t *testing.T) {
	r := newRig(t)
	verifier, err := webhook.NewSignatureVerifier([]string{hookSecret})
	require.NoError(t, err)
	h := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil }, r.inst.HandlerOption())

	req := delivery(t, uuid.NewString(), payments.EventPaymentCompleted, hookSecret)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx, server := r.tracer().Start(req.Context(), "POST /webhooks", trace.WithSpanKind(trace.SpanKindServer))
	h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
	server.End()

	s := r.one(t, paymentsotel.SpanWebhook)
	assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
	assert.Equal(t, server.SpanContext().SpanID(), s.Parent().SpanID())
	assert.Equal(t, server.SpanContext().TraceID(), s.SpanContext().TraceID())
}
