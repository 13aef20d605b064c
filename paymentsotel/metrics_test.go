package paymentsotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestMetricsOfARetriedJourney: a create that succeeds at once and an
// initiate that meets two 503s give exactly these data points.
func TestMetricsOfARetriedJourney(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	ctx := testContext(t)
	rcp, err := client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 2}))
	_, err = client.Payments.Initiate(ctx, initiateParams(rcp.ID, "order-metrics"))
	require.NoError(t, err)
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	peer := "server.address=127.0.0.1,server.port=" + u.Port()

	m := r.metric(t, paymentsotel.MetricHTTPClientRequestDuration)
	assert.Equal(t, "s", m.Unit)
	assert.Equal(t, map[string]uint64{
		"http.request.method=POST,http.response.status_code=201," + peer + ",url.template=/payments/recipients":              1,
		"error.type=503,http.request.method=POST,http.response.status_code=503," + peer + ",url.template=/payments/initiate": 2,
		"http.request.method=POST,http.response.status_code=200," + peer + ",url.template=/payments/initiate":                1,
	}, histCounts(t, m))
	h := m.Data.(metricdata.Histogram[float64])
	assert.Equal(t, []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}, h.DataPoints[0].Bounds)

	assert.Equal(t, map[string]int64{
		"payments.operation=payments.initiate,payments.retry.reason=503": 2,
	}, sumValues(t, r.metric(t, paymentsotel.MetricRetries)))

	ops := r.metric(t, paymentsotel.MetricOperationDuration)
	assert.Equal(t, "s", ops.Unit)
	assert.Equal(t, map[string]uint64{
		"payments.operation=recipients.create,payments.outcome=success": 1,
		"payments.operation=payments.initiate,payments.outcome=success": 1,
	}, histCounts(t, ops))

	// The operation took at least as long as its three attempts.
	var attemptsSum, opSum float64
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, _ := dp.Attributes.Value("url.template"); v.AsString() == "/payments/initiate" {
			attemptsSum += dp.Sum
		}
	}
	for _, dp := range ops.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, _ := dp.Attributes.Value(paymentsotel.OperationKey); v.AsString() == "payments.initiate" {
			opSum = dp.Sum
		}
	}
	assert.Greater(t, attemptsSum, 0.0)
	assert.GreaterOrEqual(t, opSum, attemptsSum)
}

// TestFailedOperationMetric: an operation that fails is counted with outcome
// "error" and its error.type.
func TestFailedOperationMetric(t *testing.T) {
	r := newRig(t)
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := r.fakeClient(srv)
	_, err := client.Payments.Initiate(testContext(t), initiateParams("3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", "order-none"))
	require.Error(t, err)
	status := attrs(r.one(t, "payments.initiate"))["error.type"]
	require.Contains(t, []string{"404", "422"}, status)
	assert.Equal(t, map[string]uint64{
		"error.type=" + status + ",payments.operation=payments.initiate,payments.outcome=error": 1,
	}, histCounts(t, r.metric(t, paymentsotel.MetricOperationDuration)))
}

// TestDefaultsAreTheGlobals: without options, New uses the global tracer
// provider, meter provider and propagator.
func TestDefaultsAreTheGlobals(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	// The first Set makes the global defaults delegate to it for good, so
	// putting them back would keep this test's providers: leave no-ops.
	t.Cleanup(func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})

	inst, err := paymentsotel.New()
	require.NoError(t, err)
	srv := paymentstest.NewServer()
	defer srv.Close()
	front := newFrontServer(t, proxyTo(t, srv))
	client, err := payments.NewClient(srv.APIKey(), append(inst.ClientOptions(), payments.WithBaseURL(front.URL))...)
	require.NoError(t, err)
	_, err = client.Recipients.Create(testContext(t), recipientParams())
	require.NoError(t, err)

	var names []string
	for _, s := range spans.Ended() {
		names = append(names, s.Name())
	}
	assert.Equal(t, []string{"POST /payments/recipients", "recipients.create"}, names)
	sc := spans.Ended()[0].SpanContext()
	assert.Equal(t, []string{"00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"}, front.seen())
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.Equal(t, paymentsotel.ScopeName, rm.ScopeMetrics[0].Scope.Name)
}

// TestSurprisesCounted: every surprise a client or a handler meets is
// counted in payments.surprises, by kind (and operation, for a client's),
// though each is logged only once.
func TestSurprisesCounted(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"success":true,"message":"ok","stan":"s","data":{"id":"p","reference":"r","status":"processing",` +
			`"amount":"1","currency":"NGN","completed_at":"2025-03-01T10:00:00Z"}}`))
	}))
	defer srv.Close()
	client, err := payments.NewClient("test-key", append(r.inst.ClientOptions(), payments.WithBaseURL(srv.URL))...)
	require.NoError(t, err)
	for range 2 {
		_, err := client.Payments.Confirm(testContext(t), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
		require.NoError(t, err)
	}
	verifier, err := webhook.NewSignatureVerifier([]string{hookSecret})
	require.NoError(t, err)
	h := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil }, r.inst.HandlerOption())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, delivery(t, uuid.NewString(), "payout.settled", hookSecret))
	require.Equal(t, http.StatusOK, w.Code)

	m := r.metric(t, paymentsotel.MetricSurprises)
	assert.Equal(t, "{surprise}", m.Unit)
	assert.Equal(t, map[string]int64{
		"payments.operation=payments.confirm,payments.surprise.kind=payment_status": 2,
		"payments.operation=payments.confirm,payments.surprise.kind=unknown_field":  2,
		"payments.surprise.kind=event_kind":                                         1,
	}, sumValues(t, m))
}
