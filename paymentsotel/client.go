package paymentsotel

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// callState is one operation as its attempts see it: the Observer puts it in
// the context that every attempt runs under.
type callState struct {
	mu   sync.Mutex
	last string // the outcome of the latest attempt: a status code or an error type
}

func (s *callState) setLast(outcome string) {
	s.mu.Lock()
	s.last = outcome
	s.mu.Unlock()
}

func (s *callState) lastOutcome() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

type callKey struct{}

// Outcomes of an operation, for OutcomeKey.
const (
	outcomeSuccess   = "success"
	outcomeError     = "error"
	outcomeCancelled = "cancelled"
)

// Observer returns the payments.OperationObserver that makes the operation
// span and records payments.client.operation.duration. ClientOptions
// includes it; use it alone only to combine it with an observer of your own.
func (in *Instrumentation) Observer() payments.OperationObserver {
	return in.observe
}

func (in *Instrumentation) observe(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
	name := op.Name
	if name == "" {
		name = "do"
	}
	start := time.Now()
	ctx, span := in.tracer.Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start),
		trace.WithAttributes(OperationKey.String(name)))
	ctx = context.WithValue(ctx, callKey{}, &callState{})
	return ctx, func(res payments.OperationResult) {
		end := time.Now()
		errType, cancelled := classify(res.Err)
		outcome := outcomeSuccess
		switch {
		case cancelled:
			outcome = outcomeCancelled
		case res.Err != nil:
			outcome = outcomeError
		}
		if span.IsRecording() {
			attrs := make([]attribute.KeyValue, 0, 5)
			attrs = append(attrs, AttemptsKey.Int(res.Attempts))
			if res.StatusCode > 0 {
				attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(res.StatusCode))
			}
			if res.Stan != "" {
				attrs = append(attrs, StanKey.String(res.Stan))
			}
			if res.IdempotencyKey != "" {
				attrs = append(attrs, IdempotencyKeyKey.String(res.IdempotencyKey))
			}
			if errType != "" {
				attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
				span.SetStatus(codes.Error, errType)
			}
			span.SetAttributes(attrs...)
		}
		span.End(trace.WithTimestamp(end))

		mattrs := []attribute.KeyValue{OperationKey.String(name), OutcomeKey.String(outcome)}
		if errType != "" {
			mattrs = append(mattrs, semconv.ErrorTypeKey.String(errType))
		}
		in.opDuration.Record(ctx, end.Sub(start).Seconds(), metric.WithAttributeSet(attribute.NewSet(mattrs...)))
	}
}

// Middleware returns the payments.Middleware that makes a span per HTTP
// attempt, sends the trace context in the request's headers and records
// http.client.request.duration and payments.client.retries. ClientOptions
// includes it. Without the Observer, its spans have no operation parent and
// retries are counted with reason "_OTHER".
func (in *Instrumentation) Middleware() payments.Middleware {
	return in.attempt
}

func (in *Instrumentation) attempt(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx := req.Context()
	a, _ := payments.AttemptFromContext(ctx)
	st, _ := ctx.Value(callKey{}).(*callState)
	t := newTarget(req.URL, a.Operation.PathTemplate)
	method, original := methodOf(req.Method)

	// The metric's attributes; the span gets these and a few more.
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		semconv.HTTPRequestMethodKey.String(method),
		semconv.ServerAddressKey.String(t.address),
		semconv.ServerPortKey.Int(t.port))
	if t.template != "" {
		attrs = append(attrs, semconv.URLTemplateKey.String(t.template))
	}
	nMetric := len(attrs)

	if a.Number > 1 {
		reason := "_OTHER"
		if st != nil && st.lastOutcome() != "" {
			reason = st.lastOutcome()
		}
		in.retries.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			OperationKey.String(operationName(a.Operation)), RetryReasonKey.String(reason))))
	}

	start := time.Now()
	var span trace.Span
	ctx, span = in.tracer.Start(ctx, t.spanName(method), trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	if span.IsRecording() {
		spanAttrs := append(attrs, semconv.URLFullKey.String(t.full))
		if original != "" {
			spanAttrs = append(spanAttrs, semconv.HTTPRequestMethodOriginalKey.String(original))
		}
		if a.Number > 1 {
			spanAttrs = append(spanAttrs, semconv.HTTPRequestResendCountKey.Int(a.Number-1))
		}
		span.SetAttributes(spanAttrs...)
	}
	// The request is the SDK's: the trace context goes on a copy.
	req = req.Clone(ctx)
	in.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))

	rec := &attemptRecord{in: in, ctx: ctx, span: span, start: start, attrs: attrs[:nMetric:nMetric]}
	resp, err := next(req)
	if err != nil || resp == nil {
		errType, _ := classify(err)
		if st != nil {
			st.setLast(errType)
		}
		rec.finish(0, err)
		return resp, err
	}
	if st != nil {
		st.setLast(strconv.Itoa(resp.StatusCode))
	}
	rec.status = resp.StatusCode
	if resp.Body == nil || resp.Body == http.NoBody {
		rec.finish(resp.StatusCode, nil)
		return resp, nil
	}
	// The attempt lasts until its answer has been read.
	resp.Body = &attemptBody{ReadCloser: resp.Body, rec: rec}
	return resp, nil
}

func operationName(op payments.Operation) string {
	if op.Name == "" {
		return "do"
	}
	return op.Name
}

// attemptRecord ends an attempt's span and records its duration, once.
type attemptRecord struct {
	in     *Instrumentation
	ctx    context.Context
	span   trace.Span
	start  time.Time
	attrs  []attribute.KeyValue // the metric's, without status and error
	status int
	done   atomic.Bool
}

func (r *attemptRecord) finish(status int, err error) {
	if !r.done.CompareAndSwap(false, true) {
		return
	}
	end := time.Now()
	errType, _ := classify(err)
	if errType == "" && status >= 400 {
		errType = strconv.Itoa(status)
	}
	attrs := r.attrs
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(status))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	if r.span.IsRecording() {
		r.span.SetAttributes(attrs[len(r.attrs):]...)
		switch {
		case err != nil && errType != "":
			r.span.SetStatus(codes.Error, errType)
		case errType != "":
			// The status code says it all: no description, as the
			// semantic conventions ask.
			r.span.SetStatus(codes.Error, "")
		}
	}
	r.span.End(trace.WithTimestamp(end))
	r.in.attemptDuration.Record(r.ctx, end.Sub(r.start).Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}

// attemptBody ends the attempt when its answer has been read or closed; an
// error reading it (the attempt's deadline, a dropped connection) is the
// attempt's error.
type attemptBody struct {
	io.ReadCloser
	rec *attemptRecord
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.rec.finish(b.rec.status, nil)
	case err != nil:
		b.rec.finish(b.rec.status, err)
	}
	return n, err
}

func (b *attemptBody) Close() error {
	err := b.ReadCloser.Close()
	b.rec.finish(b.rec.status, nil)
	return err
}
