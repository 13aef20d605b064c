// Command observability runs a payment journey with the payments SDK traced
// and measured by paymentsotel, and prints every span, then the metrics, to
// stdout with OpenTelemetry's stdout exporters (one JSON object a line).
//
// With no PAYMENTS_API_KEY set it runs against the in-process fake service
// (paymentstest), which fails the first initiate with a 503 to show a retry
// and delivers its webhooks to an instrumented webhook.Handler:
//
//	go run ./examples/observability
//
// With PAYMENTS_API_KEY and PAYMENTS_BASE_URL set it runs against the real
// service instead (webhooks then go to the URL in your dashboard).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) (err error) {
	// The OpenTelemetry SDK is the program's choice. Here each span is
	// written to out when it ends, and the metrics once, at shutdown; in
	// production use sdktrace.WithBatcher and an OTLP exporter.
	spanExporter, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return err
	}
	metricExporter, err := stdoutmetric.New(stdoutmetric.WithWriter(out))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExporter))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter)))
	defer func() { err = errors.Join(err, tp.Shutdown(context.Background()), mp.Shutdown(context.Background())) }()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	// paymentsotel uses the global providers and propagator unless given
	// others (paymentsotel.WithTracerProvider, ...).
	inst, err := paymentsotel.New()
	if err != nil {
		return err
	}
	var client *payments.Client
	var fake *paymentstest.Server
	if os.Getenv("PAYMENTS_API_KEY") == "" {
		// The receiver: the SDK's webhook handler, instrumented. Mount it
		// on your own server's mux in a real program.
		const secret = "whsec_observability_example"
		verifier, err := webhook.NewSignatureVerifier([]string{secret})
		if err != nil {
			return err
		}
		receiver := httptest.NewServer(webhook.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
			return nil // your processing: ctx carries the delivery's span
		}, inst.HandlerOption()))
		defer receiver.Close()
		fake = paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}))
		defer fake.Close()
		client = fake.Client(inst.ClientOptions()...)
	} else {
		client, err = payments.NewClientFromEnv(inst.ClientOptions()...)
		if err != nil {
			return err
		}
	}

	// One span of the program's own around the journey: every operation's
	// span is its child, in one trace.
	ctx, checkout := otel.Tracer("example/checkout").Start(ctx, "checkout")
	defer checkout.End()
	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
		AccountBankCode: "058",
	})
	if err != nil {
		return err
	}
	if fake != nil {
		if err := fake.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}); err != nil {
			panic(err)
		} // the SDK retries it
	}
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-" + uuid.NewString(),
	})
	if err != nil {
		return err
	}
	if _, err := client.Payments.Confirm(ctx, payment.ConfirmParams()); err != nil {
		return err
	}
	if _, err := client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		return err
	}
	if fake != nil {
		if err := fake.WaitForDeliveries(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "paid %s: trace %s\n", payment.Reference, checkout.SpanContext().TraceID())
	return nil
}
