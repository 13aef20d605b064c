package paymentsotel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shopspring/decimal"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
)

// benchInitiateAnswer is a canned initiate answer: the envelope around a
// pending payment and its quote.
var benchInitiateAnswer = []byte(`{"success":true,"message":"Payment initiated","stan":"7c9e6679-7425-40de-944b-e07fc1f90ae7",` +
	`"data":{"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"pending",` +
	`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","created_at":"2025-03-01T10:00:00Z",` +
	`"quote":{"quote_id":"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9","amount":"15000.50","fee":"25.00",` +
	`"exchange_rate":"1","total_amount":"15025.50","currency":"NGN","expires_at":"2025-03-01T10:05:00Z"}}}`)

// BenchmarkInitiateTracing measures what instrumentation adds to one
// Payments.Initiate against a local server that answers at once:
//
//   - otel=none: no instrumentation;
//   - otel=noop: ClientOptions with no-op tracer and meter providers (what a
//     program pays before it configures OpenTelemetry);
//   - otel=sdk: the OpenTelemetry SDK sampling every span into an in-memory
//     recorder and aggregating metrics for a manual reader, with the W3C
//     trace context sent on every request.
//
// Besides wall time it reports cpu-ns/op, the process's CPU time per call
// (client and server together), which varies less on a busy machine.
func BenchmarkInitiateTracing(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(benchInitiateAnswer)
	}))
	defer ts.Close()
	params := &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
		RecipientID: "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", Reference: "order-1042", Description: "Invoice 1042",
	}

	run := func(b *testing.B, opts []payments.Option, each func(i int)) {
		client, err := payments.NewClient("sk_bench_key", append(opts, payments.WithBaseURL(ts.URL))...)
		if err != nil {
			b.Fatal(err)
		}
		defer client.Close()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		cpuStart, cpuOK := cpuTime()
		for i := 0; i < b.N; i++ {
			if _, err := client.Payments.Initiate(ctx, params); err != nil {
				b.Fatal(err)
			}
			if each != nil {
				each(i)
			}
		}
		// The client's and the server's CPU together: the server's share is
		// the same in every variant.
		if cpuEnd, ok := cpuTime(); ok && cpuOK && b.N > 0 {
			b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N), "cpu-ns/op")
		}
	}

	b.Run("otel=none", func(b *testing.B) { run(b, nil, nil) })

	b.Run("otel=noop", func(b *testing.B) {
		inst, err := paymentsotel.New(
			paymentsotel.WithTracerProvider(tracenoop.NewTracerProvider()),
			paymentsotel.WithMeterProvider(metricnoop.NewMeterProvider()),
			paymentsotel.WithPropagator(propagation.TraceContext{}))
		if err != nil {
			b.Fatal(err)
		}
		run(b, inst.ClientOptions(), nil)
	})

	b.Run("otel=sdk", func(b *testing.B) {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		}()
		inst, err := paymentsotel.New(paymentsotel.WithTracerProvider(tp), paymentsotel.WithMeterProvider(mp),
			paymentsotel.WithPropagator(propagation.TraceContext{}))
		if err != nil {
			b.Fatal(err)
		}
		run(b, inst.ClientOptions(), func(i int) {
			if i%1024 == 1023 && i < b.N-1 {
				spans.Reset() // keep the recorder's memory bounded
			}
		})
		if b.N > 0 && len(spans.Ended()) == 0 {
			b.Fatal("no span recorded")
		}
	})
}
