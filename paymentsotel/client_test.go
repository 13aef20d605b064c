package paymentsotel_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestRetriedInitiateSpanTree: an initiate that meets two 503s is one
// INTERNAL operation span with three CLIENT attempt children, named and
// attributed as the HTTP client semantic conventions say.
func TestRetriedInitiateSpanTree(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	ctx := testContext(t)

	rcp, err := client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 2}))
	p, err := client.Payments.Initiate(ctx, initiateParams(rcp.ID, "order-tree"))
	require.NoError(t, err)

	op := r.one(t, "payments.initiate")
	assert.Equal(t, trace.SpanKindInternal, op.SpanKind())
	assert.Equal(t, codes.Unset, op.Status().Code)
	assert.Equal(t, map[string]string{
		"payments.operation":        "payments.initiate",
		"payments.attempts":         "3",
		"http.response.status_code": "200",
		"payments.stan":             p.LastResponse().Stan,
		"payments.idempotency_key":  p.LastResponse().IdempotencyKey,
	}, attrs(op))
	assert.Equal(t, paymentsotel.ScopeName, op.InstrumentationScope().Name)
	assert.Equal(t, payments.Version, op.InstrumentationScope().Version)

	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	attempts := r.named("POST /payments/initiate")
	require.Len(t, attempts, 3)
	for i, a := range attempts {
		assert.Equal(t, trace.SpanKindClient, a.SpanKind(), "attempt %d", i+1)
		assert.Equal(t, op.SpanContext().TraceID(), a.SpanContext().TraceID(), "attempt %d", i+1)
		assert.Equal(t, op.SpanContext().SpanID(), a.Parent().SpanID(), "attempt %d is a child of the operation", i+1)
		want := map[string]string{
			"http.request.method":       "POST",
			"server.address":            "127.0.0.1",
			"server.port":               u.Port(),
			"url.full":                  srv.URL() + "/payments/initiate",
			"url.template":              "/payments/initiate",
			"http.response.status_code": "503",
			"error.type":                "503",
		}
		if i > 0 {
			want["http.request.resend_count"] = strconv.Itoa(i)
		}
		if i == 2 {
			want["http.response.status_code"] = "200"
			delete(want, "error.type")
		}
		assert.Equal(t, want, attrs(a), "attempt %d", i+1)
		wantStatus := codes.Error
		if i == 2 {
			wantStatus = codes.Unset
		}
		assert.Equal(t, wantStatus, a.Status().Code, "attempt %d", i+1)
		assert.Empty(t, a.Status().Description, "attempt %d: the status code says it all", i+1)
		assert.False(t, a.StartTime().Before(op.StartTime()) || a.EndTime().After(op.EndTime()),
			"attempt %d lies within its operation", i+1)
	}
}

// TestTraceparentReachesTheServer: every attempt carries a traceparent
// header, received by the server, that names the attempt's own span.
func TestTraceparentReachesTheServer(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	front := newFrontServer(t, proxyTo(t, srv))
	client, err := payments.NewClient(srv.APIKey(), append(r.inst.ClientOptions(),
		payments.WithBaseURL(front.URL), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond}))...)
	require.NoError(t, err)
	ctx := testContext(t)

	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusBadGateway, Times: 1}))
	_, err = client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)

	attempts := r.named("POST /payments/recipients")
	require.Len(t, attempts, 2)
	seen := front.seen()
	require.Len(t, seen, 2)
	for i, a := range attempts {
		sc := a.SpanContext()
		assert.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", seen[i], "attempt %d", i+1)
	}
	assert.Equal(t, r.one(t, "recipients.create").SpanContext().TraceID(), attempts[0].SpanContext().TraceID())
}

// TestUpdateSpanHasNoID: the attempt of an update names the template, and
// the recipient's id appears in no attribute.
func TestUpdateSpanHasNoID(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	ctx := testContext(t)
	rcp, err := client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)
	_, err = client.Recipients.Update(ctx, rcp.ID, &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor"})
	require.NoError(t, err)

	a := r.one(t, "PUT /payments/recipients/{id}")
	got := attrs(a)
	assert.Equal(t, srv.URL()+"/payments/recipients/{id}", got["url.full"])
	assert.Equal(t, "/payments/recipients/{id}", got["url.template"])
	for k, v := range got {
		assert.NotContains(t, v, rcp.ID, "attribute %s", k)
	}
	assert.Equal(t, "recipients.update", attrs(r.one(t, "recipients.update"))["payments.operation"])
}

// TestBasePathPrefixInTemplate: a base URL with a path puts its prefix in
// url.template and the span name, ids still replaced.
func TestBasePathPrefixInTemplate(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/v2/", http.StripPrefix("/v2", proxyTo(t, srv)))
	front := httptest.NewServer(mux)
	defer front.Close()
	client, err := payments.NewClient(srv.APIKey(), append(r.inst.ClientOptions(), payments.WithBaseURL(front.URL+"/v2"))...)
	require.NoError(t, err)
	ctx := testContext(t)
	rcp, err := client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)
	_, err = client.Recipients.Update(ctx, rcp.ID, &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor"})
	require.NoError(t, err)

	a := r.one(t, "PUT /v2/payments/recipients/{id}")
	assert.Equal(t, front.URL+"/v2/payments/recipients/{id}", attrs(a)["url.full"])
	assert.Equal(t, "/v2/payments/recipients/{id}", attrs(a)["url.template"])
}

// TestDoSpan: Client.Do has no template: the span is named by the method
// alone, has no url.template, and url.full loses the query and the ids.
func TestDoSpan(t *testing.T) {
	r := newRig(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"success":true,"message":"ok","stan":"s-1","data":[]}`))
	}))
	defer ts.Close()
	client, err := payments.NewClient("sk_test_key", append(r.inst.ClientOptions(), payments.WithBaseURL(ts.URL))...)
	require.NoError(t, err)
	_, err = client.Do(testContext(t), http.MethodGet,
		"/v1/payments/recipients/3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11/history/8812345?account=0123456789", nil, nil)
	require.NoError(t, err)

	op := r.one(t, "do")
	assert.Equal(t, "do", attrs(op)["payments.operation"])
	a := r.one(t, "GET")
	assert.Equal(t, op.SpanContext().SpanID(), a.Parent().SpanID())
	got := attrs(a)
	assert.Equal(t, ts.URL+"/v1/payments/recipients/{id}/history/{id}", got["url.full"])
	assert.NotContains(t, got, "url.template")
	assert.Equal(t, "200", got["http.response.status_code"])
}

// TestCancelledContextIsNotAnError: the caller cancelling a call leaves the
// spans' status unset, with no error.type, and the operation's outcome is
// "cancelled".
func TestCancelledContextIsNotAnError(t *testing.T) {
	r := newRig(t)
	arrived := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		arrived <- struct{}{}
		<-req.Context().Done()
	}))
	defer ts.Close()
	client, err := payments.NewClient("sk_test_key", append(r.inst.ClientOptions(), payments.WithBaseURL(ts.URL))...)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(testContext(t))
	go func() { <-arrived; cancel() }()
	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	require.ErrorIs(t, err, context.Canceled)

	for _, s := range []sdktrace.ReadOnlySpan{r.one(t, "webhooks.trigger"), r.one(t, "POST /webhooks/events/trigger/{event_id}")} {
		assert.Equal(t, codes.Unset, s.Status().Code, s.Name())
		assert.NotContains(t, attrs(s), "error.type", s.Name())
	}
	ops := histCounts(t, r.metric(t, paymentsotel.MetricOperationDuration))
	assert.Equal(t, map[string]uint64{"payments.operation=webhooks.trigger,payments.outcome=cancelled": 1}, ops)
}

// TestDeadlineIsATimeout: a deadline that runs out is an error, "timeout".
func TestDeadlineIsATimeout(t *testing.T) {
	r := newRig(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-req.Context().Done()
	}))
	defer ts.Close()
	client, err := payments.NewClient("sk_test_key", append(r.inst.ClientOptions(), payments.WithBaseURL(ts.URL))...)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	op := r.one(t, "webhooks.trigger")
	assert.Equal(t, codes.Error, op.Status().Code)
	assert.Equal(t, "timeout", attrs(op)["error.type"])
	a := r.one(t, "POST /webhooks/events/trigger/{event_id}")
	assert.Equal(t, codes.Error, a.Status().Code)
	assert.Equal(t, "timeout", attrs(a)["error.type"])
	assert.NotContains(t, attrs(a), "http.response.status_code")
}

// TestAPIErrorMarksTheOperation: a 404 answer fails the operation with
// error.type "404"; the error's text is recorded nowhere.
func TestAPIErrorMarksTheOperation(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	_, err := client.Recipients.Update(testContext(t), "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11",
		&payments.RecipientUpdateParams{AccountName: "Nobody"})
	require.ErrorIs(t, err, payments.ErrNotFound)

	op := r.one(t, "recipients.update")
	assert.Equal(t, codes.Error, op.Status().Code)
	assert.Equal(t, "404", op.Status().Description)
	assert.Equal(t, "404", attrs(op)["error.type"])
	assert.Equal(t, "404", attrs(op)["http.response.status_code"])
	assert.Empty(t, op.Events(), "no exception event carries the error's text")
	a := r.one(t, "PUT /payments/recipients/{id}")
	assert.Equal(t, "404", attrs(a)["error.type"])
}

// TestDroppedConnectionIsRetriedAndCounted: a connection dropped without an
// answer is an attempt with error.type "connection_closed", and the retry
// after it is counted with that reason.
func TestDroppedConnectionIsRetriedAndCounted(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, Times: 1}))
	_, err := client.Recipients.Create(testContext(t), recipientParams())
	require.NoError(t, err)

	attempts := r.named("POST /payments/recipients")
	require.Len(t, attempts, 2)
	assert.Equal(t, "connection_closed", attrs(attempts[0])["error.type"])
	assert.Equal(t, codes.Error, attempts[0].Status().Code)
	assert.Equal(t, "connection_closed", attempts[0].Status().Description)
	assert.Equal(t, "201", attrs(attempts[1])["http.response.status_code"])
	retries := sumValues(t, r.metric(t, paymentsotel.MetricRetries))
	assert.Equal(t, map[string]int64{"payments.operation=recipients.create,payments.retry.reason=connection_closed": 1}, retries)
}

// TestMiddlewareAloneStillTraces: the middleware without the observer makes
// root attempt spans and counts retries with reason "_OTHER".
func TestMiddlewareAloneStillTraces(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client(payments.WithMiddleware(r.inst.Middleware()))
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
	_, err := client.Recipients.Create(testContext(t), recipientParams())
	require.NoError(t, err)

	attempts := r.named("POST /payments/recipients")
	require.Len(t, attempts, 2)
	assert.False(t, attempts[0].Parent().IsValid())
	assert.Empty(t, r.named("recipients.create"))
	retries := sumValues(t, r.metric(t, paymentsotel.MetricRetries))
	assert.Equal(t, map[string]int64{"payments.operation=recipients.create,payments.retry.reason=_OTHER": 1}, retries)
}

// TestErrorTypesAreLowCardinality: errors that are not answers are named
// by kind, never by their text.
func TestErrorTypesAreLowCardinality(t *testing.T) {
	r := newRig(t)
	client, err := payments.NewClient("sk_test_key", append(r.inst.ClientOptions(),
		payments.WithBaseURL("http://127.0.0.1:1"), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))...)
	require.NoError(t, err)
	_, err = client.Webhooks.Trigger(testContext(t), payments.EventPaymentCompleted)
	var terr *payments.TransportError
	require.True(t, errors.As(err, &terr), "%v", err)
	op := r.one(t, "webhooks.trigger")
	assert.Equal(t, "connect_error", attrs(op)["error.type"])
	assert.False(t, strings.Contains(op.Status().Description, "127.0.0.1"))
}

// TestMiddlewareLeavesTheSDKRequestAlone: the trace context goes on a copy
// of the request; the request the SDK passed in (and reuses on a retry) is
// not changed.
func TestMiddlewareLeavesTheSDKRequestAlone(t *testing.T) {
	r := newRig(t)
	req := httptest.NewRequest(http.MethodPost, "https://api.example.com/payments/initiate", nil)
	req.Header.Set("Authorization", "Bearer sk_test_key")
	var sent *http.Request
	resp, err := r.inst.Middleware()(req, func(out *http.Request) (*http.Response, error) {
		sent = out
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, req.Header.Get("traceparent"), "the SDK's request is untouched")
	assert.Len(t, req.Header, 1)
	require.NotSame(t, req, sent)
	assert.Regexp(t, `^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`, sent.Header.Get("traceparent"))
	assert.Equal(t, "Bearer sk_test_key", sent.Header.Get("Authorization"))

	a := r.one(t, "POST")
	assert.Equal(t, "https://api.example.com/payments/initiate", attrs(a)["url.full"])
	assert.Equal(t, "443", attrs(a)["server.port"])
	assert.Equal(t, trace.SpanContextFromContext(sent.Context()).SpanID(), a.SpanContext().SpanID(),
		"the request sent on carries the attempt's span")
}

// TestNoopTracerSendsNothing: with a no-op tracer provider no traceparent
// is sent, and the request goes on as it came.
func TestNoopTracerSendsNothing(t *testing.T) {
	inst, err := paymentsotel.New(paymentsotel.WithTracerProvider(tracenoop.NewTracerProvider()),
		paymentsotel.WithPropagator(propagation.TraceContext{}))
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "https://api.example.com/x", nil)
	var sent *http.Request
	_, err = inst.Middleware()(req, func(out *http.Request) (*http.Response, error) {
		sent = out
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	require.NoError(t, err)
	assert.Same(t, req, sent)
	assert.Empty(t, sent.Header.Get("traceparent"))
}

// A wait for the client's rate limit is on the operation's span, and in no
// attempt span: the one attempt starts after it.
func TestRateLimitWaitIsOnTheOperationSpan(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv, payments.WithRateLimit(5, 1))
	ctx := testContext(t)
	for range 2 {
		_, err := client.Recipients.Create(ctx, recipientParams())
		require.NoError(t, err)
	}
	ops := r.named("recipients.create")
	require.Len(t, ops, 2)
	assert.NotContains(t, attrs(ops[0]), "payments.wait", "the first call did not wait")
	wait, err := strconv.ParseFloat(attrs(ops[1])["payments.wait"], 64)
	require.NoError(t, err)
	assert.Greater(t, wait, 0.12, "about 200ms at 5/s")
	assert.Equal(t, "1", attrs(ops[1])["payments.attempts"])
	attempts := r.named("POST /payments/recipients")
	require.Len(t, attempts, 2)
	assert.GreaterOrEqual(t, attempts[1].StartTime().Sub(ops[1].StartTime()).Seconds(), wait*0.9,
		"the attempt span starts after the wait")
}
