package paymentsotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// rig is an Instrumentation wired to the OpenTelemetry SDK: an in-memory
// span recorder and a manual metric reader.
type rig struct {
	inst   *paymentsotel.Instrumentation
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

// tracer is a tracer of the rig's provider, for spans a test makes itself.
func (r *rig) tracer() trace.Tracer { return r.tp.Tracer("test") }

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	inst, err := paymentsotel.New(
		paymentsotel.WithTracerProvider(tp),
		paymentsotel.WithMeterProvider(mp),
		paymentsotel.WithPropagator(propagation.TraceContext{}),
	)
	require.NoError(t, err)
	r.inst, r.tp = inst, tp
	return r
}

// fakeClient is a client of srv instrumented by the rig.
func (r *rig) fakeClient(srv *paymentstest.Server, opts ...payments.Option) *payments.Client {
	return srv.Client(append(r.inst.ClientOptions(), opts...)...)
}

// named returns the ended spans called name, in the order they ended.
func (r *rig) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only ended span called name.
func (r *rig) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := r.named(name)
	require.Len(t, spans, 1, "spans named %q", name)
	return spans[0]
}

// metric returns the metric called name, collected now.
func (r *rig) metric(t *testing.T, name string) metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %q", name)
	return metricdata.Metrics{}
}

// histCounts maps each data point of a histogram, by its attributes, to its
// count.
func histCounts(t *testing.T, m metricdata.Metrics) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a %T", m.Name, m.Data)
	out := map[string]uint64{}
	for _, dp := range h.DataPoints {
		out[setKey(dp.Attributes)] = dp.Count
	}
	return out
}

// sumValues maps each data point of a counter, by its attributes, to its
// value.
func sumValues(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", m.Name, m.Data)
	out := map[string]int64{}
	for _, dp := range s.DataPoints {
		out[setKey(dp.Attributes)] = dp.Value
	}
	return out
}

// setKey writes an attribute set as "k=v,k=v", sorted by key.
func setKey(s attribute.Set) string {
	parts := make([]string, 0, s.Len())
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	return strings.Join(parts, ",")
}

// attrs returns a span's attributes by key, as strings.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// frontServer puts an HTTP server in front of h that records the traceparent
// header of every request it passes on.
type frontServer struct {
	*httptest.Server
	mu          sync.Mutex
	traceparent []string
}

// proxyTo forwards requests to srv, as a front server in the same process
// would.
func proxyTo(t *testing.T, srv *paymentstest.Server) http.Handler {
	t.Helper()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

func newFrontServer(t *testing.T, h http.Handler) *frontServer {
	f := &frontServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.traceparent = append(f.traceparent, r.Header.Get("traceparent"))
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *frontServer) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.traceparent...)
}

// A recipient to pay, and what a test needs to make one.
func recipientParams() *payments.RecipientCreateParams {
	limit := payments.Amount{Decimal: decimal.RequireFromString("985000.75")}
	return &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "Example Bank",
		AccountBankCode:    "058",
		AmountLimit:        &limit,
		Identification:     &payments.Identification{Type: payments.IdentificationNationalID, Number: "NIN48213377"},
	}
}

func initiateParams(recipientID, reference string) *payments.PaymentInitiateParams {
	return &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("7319.46")},
		Currency:    "NGN",
		RecipientID: recipientID,
		Reference:   reference,
		Description: "Invoice 1042",
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
