package paymentsotel

import (
	"errors"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and meter: the
// package's import path.
const ScopeName = "github.com/paymentsapi/payments-go/paymentsotel"

// Attribute keys this package adds to those of the semantic conventions.
const (
	// OperationKey is the operation's name, as payments.Operation.Name.
	OperationKey = attribute.Key("payments.operation")
	// OutcomeKey is how an operation ended: "success", "error" or
	// "cancelled".
	OutcomeKey = attribute.Key("payments.outcome")
	// AttemptsKey is the number of HTTP attempts an operation made.
	AttemptsKey = attribute.Key("payments.attempts")
	// StanKey is the service's identifier of the operation (span only).
	StanKey = attribute.Key("payments.stan")
	// IdempotencyKeyKey is the Idempotency-Key the operation sent (span
	// only).
	IdempotencyKeyKey = attribute.Key("payments.idempotency_key")
	// WaitKey is how long, in seconds, an operation waited for its turn
	// under the Client's rate limit and for the pause a 429 imposed on the
	// Client (payments.OperationResult.Waited; span only, set when
	// positive). The waits are not attempts: no attempt span covers them.
	WaitKey = attribute.Key("payments.wait")
	// RetryReasonKey is why an attempt was retried: the previous attempt's
	// status code or error type.
	RetryReasonKey = attribute.Key("payments.retry.reason")
	// WebhookEventTypeKey is a delivered event's type, such as
	// "payment.completed".
	WebhookEventTypeKey = attribute.Key("payments.webhook.event_type")
	// WebhookEventIDKey is a delivered event's id (span only).
	WebhookEventIDKey = attribute.Key("payments.webhook.event_id")
	// WebhookOutcomeKey is how the handler answered a delivery, as
	// webhook.DeliveryOutcome.
	WebhookOutcomeKey = attribute.Key("payments.webhook.outcome")
	// SurpriseKindKey is a surprise's kind, as payments.SurpriseKind.
	SurpriseKindKey = attribute.Key("payments.surprise.kind")
)

// Names of the metrics and of the webhook span.
const (
	MetricHTTPClientRequestDuration = "http.client.request.duration"
	MetricOperationDuration         = "payments.client.operation.duration"
	MetricRetries                   = "payments.client.retries"
	MetricWebhookDeliveries         = "payments.webhook.deliveries"
	// MetricSurprises counts what the service answered or delivered that
	// the SDK does not assume (payments.Surprise), every one, by
	// SurpriseKindKey and, for a client's, OperationKey (a delivery's have
	// none). The details are in the log line each first one gets.
	MetricSurprises = "payments.surprises"
	SpanWebhook     = "payments.webhook"
)

// Option configures New.
type Option func(*config)

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider sets the TracerProvider (default: the global one). nil
// keeps the default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithMeterProvider sets the MeterProvider (default: the global one). nil
// keeps the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// WithPropagator sets the propagator that writes the trace context into
// outgoing requests and reads it from webhook deliveries (default: the
// global one, which propagates nothing until your program sets one, such as
// propagation.TraceContext{}). nil keeps the default.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) {
		if p != nil {
			c.prop = p
		}
	}
}

// Instrumentation holds the tracer, the instruments and the propagator. Make
// one with New and share it between clients and handlers; it is safe for
// concurrent use.
type Instrumentation struct {
	tracer          trace.Tracer
	prop            propagation.TextMapPropagator
	attemptDuration metric.Float64Histogram
	opDuration      metric.Float64Histogram
	retries         metric.Int64Counter
	deliveries      metric.Int64Counter
	surprises       metric.Int64Counter
}

// The bucket boundaries (seconds) the HTTP semantic conventions advise for
// http.client.request.duration; operations, which include retries and their
// waits, get longer ones too.
var (
	attemptBuckets   = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	operationBuckets = append(attemptBuckets[:len(attemptBuckets):len(attemptBuckets)], 30, 60, 120)
)

// New returns an Instrumentation. It fails only when the MeterProvider
// refuses to make an instrument.
func New(opts ...Option) (*Instrumentation, error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	in := &Instrumentation{
		tracer: c.tp.Tracer(ScopeName,
			trace.WithInstrumentationVersion(payments.Version), trace.WithSchemaURL(semconv.SchemaURL)),
		prop: c.prop,
	}
	meter := c.mp.Meter(ScopeName,
		metric.WithInstrumentationVersion(payments.Version), metric.WithSchemaURL(semconv.SchemaURL))
	var errs [5]error
	in.attemptDuration, errs[0] = meter.Float64Histogram(MetricHTTPClientRequestDuration,
		metric.WithUnit("s"), metric.WithDescription("Duration of HTTP client requests."),
		metric.WithExplicitBucketBoundaries(attemptBuckets...))
	in.opDuration, errs[1] = meter.Float64Histogram(MetricOperationDuration,
		metric.WithUnit("s"), metric.WithDescription("Duration of payments SDK operations, retries and waits included."),
		metric.WithExplicitBucketBoundaries(operationBuckets...))
	in.retries, errs[2] = meter.Int64Counter(MetricRetries,
		metric.WithUnit("{retry}"), metric.WithDescription("HTTP attempts the payments SDK retried, by the previous attempt's outcome."))
	in.deliveries, errs[3] = meter.Int64Counter(MetricWebhookDeliveries,
		metric.WithUnit("{delivery}"), metric.WithDescription("Webhook deliveries answered, by outcome and event type."))
	in.surprises, errs[4] = meter.Int64Counter(MetricSurprises,
		metric.WithUnit("{surprise}"), metric.WithDescription("Answers and deliveries that differ from what the payments SDK assumes, by kind."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return in, nil
}

// ClientOptions returns the options that instrument a payments.Client: pass
// them to payments.NewClient (or paymentstest's Server.Client). They are
// WithObserver(Observer()) and WithMiddleware(Middleware()); other observers
// and middleware given to the same client nest with these.
func (in *Instrumentation) ClientOptions() []payments.Option {
	return []payments.Option{payments.WithObserver(in.Observer()), payments.WithMiddleware(in.Middleware())}
}

// HandlerOption returns the option that instruments a
// webhook.Handler: WithDeliveryObserver(DeliveryObserver()).
func (in *Instrumentation) HandlerOption() webhook.HandlerOption {
	return webhook.WithDeliveryObserver(in.DeliveryObserver())
}
