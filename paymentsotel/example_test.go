package paymentsotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// A client instrumented with ClientOptions: one span per operation, and one
// child span per HTTP attempt, here a 503 and its retry.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	inst, err := paymentsotel.New(
		paymentsotel.WithTracerProvider(tp),
		paymentsotel.WithPropagator(propagation.TraceContext{}),
	)
	if err != nil {
		log.Fatal(err)
	}
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client(inst.ClientOptions()...)

	if err := srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}); err != nil {
		panic(err)
	}
	_, err = client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.Ended() {
		line := s.SpanKind().String() + " " + s.Name()
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "http.response.status_code", "http.request.resend_count", "payments.attempts":
				line += " " + string(kv.Key) + "=" + kv.Value.Emit()
			}
		}
		fmt.Println(line)
	}
	// Output:
	// client POST /payments/recipients http.response.status_code=503
	// client POST /payments/recipients http.request.resend_count=1 http.response.status_code=201
	// internal recipients.create payments.attempts=2 http.response.status_code=201
}

// instrument wires paymentsotel into a client and a webhook handler, with the
// global providers that your OpenTelemetry setup installs.
func instrument(apiKey, baseURL string, verifier webhook.Verifier, processEvent webhook.EventFunc) (*payments.Client, http.Handler, error) {
	inst, err := paymentsotel.New() // or WithTracerProvider, WithMeterProvider, WithPropagator
	if err != nil {
		return nil, nil, err
	}
	client, err := payments.NewClient(apiKey, append(inst.ClientOptions(), payments.WithBaseURL(baseURL))...)
	if err != nil {
		return nil, nil, err
	}
	return client, webhook.NewHandler(verifier, processEvent, inst.HandlerOption()), nil
}

// The wiring in a program (see instrument), on the in-process fake.
func ExampleInstrumentation_ClientOptions() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	verifier, err := webhook.NewSignatureVerifier([]string{"whsec_example"})
	if err != nil {
		log.Fatal(err)
	}
	client, handler, err := instrument(srv.APIKey(), srv.URL(), verifier,
		func(ctx context.Context, ev *payments.Event) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client != nil, handler != nil)
	// Output: true true
}
