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
	ctx, span := in.tracer.Start(ctx, name, internalKind)
	if span.IsRecording() {
		span.SetAttributes(OperationKey.String(name))
	}
	ctx = context.WithValue(ctx, callKey{}, &callState{})
	return ctx, func(res payments.OperationResult) {
		elapsed := time.Since(start)
		errType, cancelled := classify(res.Err)
		outcome := outcomeSuccess
		switch {
		case cancelled:
			outcome = outcomeCancelled
		case res.Err != nil:
			outcome = outcomeError
		}
		if span.IsRecording() {
			attrs := make([]attribute.KeyValue, 0, 6)
			attrs = append(attrs, AttemptsKey.Int(res.Attempts))
			if res.Waited > 0 {
				attrs = append(attrs, WaitKey.Float64(res.Waited.Seconds()))
			}
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
		span.End()

		mattrs := []attribute.KeyValue{OperationKey.String(name), OutcomeKey.String(outcome)}
		if errType != "" {
			mattrs = append(mattrs, semconv.ErrorTypeKey.String(errType))
		}
		in.opDuration.Record(ctx, elapsed.Seconds(), metric.WithAttributeSet(attribute.NewSet(mattrs...)))
		for _, s := range res.Surprises {
			in.surprises.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(OperationKey.String(name), SurpriseKindKey.String(string(s.Kind)))))
		}
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

// Span start options, made once.
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	clientKind   = trace.WithSpanKind(trace.SpanKindClient)
)

func (in *Instrumentation) attempt(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx := req.Context()
	a, _ := payments.AttemptFromContext(ctx)
	st, _ := ctx.Value(callKey{}).(*callState)
	t := newTarget(req.URL, a.Operation.PathTemplate)
	method, original := methodOf(req.Method)

	if a.Number > 1 {
		reason := "_OTHER"
		if st != nil && st.lastOutcome() != "" {
			reason = st.lastOutcome()
		}
		in.retries.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			OperationKey.String(operationName(a.Operation)), RetryReasonKey.String(reason))))
	}

	// One allocation holds the attempt's record, the carrier of its trace
	// context and, later, its answer's body.
	rec := &attemptRecord{in: in, start: time.Now()}
	rec.attrs = append(rec.buf[:0],
		semconv.HTTPRequestMethodKey.String(method),
		semconv.ServerAddressKey.String(t.address),
		semconv.ServerPortKey.Int(t.port))
	if t.template != "" {
		rec.attrs = append(rec.attrs, semconv.URLTemplateKey.String(t.template))
	}
	rec.ctx, rec.span = in.tracer.Start(ctx, t.spanName(method), clientKind)
	if rec.span.IsRecording() {
		attrs := append(rec.attrs[:len(rec.attrs):len(rec.attrs)], semconv.URLFullKey.String(t.fullURL(req.URL)))
		if original != "" {
			attrs = append(attrs, semconv.HTTPRequestMethodOriginalKey.String(original))
		}
		if a.Number > 1 {
			attrs = append(attrs, semconv.HTTPRequestResendCountKey.Int(a.Number-1))
		}
		rec.span.SetAttributes(attrs...)
	}
	// The request is the SDK's: the trace context goes on a copy, made
	// only when there is something to send (a no-op tracer sends nothing).
	rec.carrier = carrier{req: req, ctx: rec.ctx}
	in.prop.Inject(rec.ctx, &rec.carrier)
	req = rec.carrier.req
	if !rec.carrier.cloned && rec.span.IsRecording() {
		req = req.WithContext(rec.ctx)
	}

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
	rec.body = resp.Body
	resp.Body = rec
	return resp, nil
}

func operationName(op payments.Operation) string {
	if op.Name == "" {
		return "do"
	}
	return op.Name
}

// carrier is the propagation.TextMapCarrier of an attempt: it copies the
// request on the first header it sets.
type carrier struct {
	req    *http.Request
	ctx    context.Context
	cloned bool
}

var _ propagation.TextMapCarrier = (*carrier)(nil)

func (c *carrier) Get(key string) string { return c.req.Header.Get(key) }

func (c *carrier) Set(key, value string) {
	if !c.cloned {
		c.req, c.cloned = c.req.Clone(c.ctx), true
	}
	c.req.Header.Set(key, value)
}

func (c *carrier) Keys() []string {
	keys := make([]string, 0, len(c.req.Header))
	for k := range c.req.Header {
		keys = append(keys, k)
	}
	return keys
}

// attemptRecord is one attempt: it ends the attempt's span and records its
// duration, once, when the answer has been read or closed (it is the
// answer's body), or at once when there is none. An error reading the body
// (the attempt's deadline, a dropped connection) is the attempt's error.
type attemptRecord struct {
	in      *Instrumentation
	ctx     context.Context
	span    trace.Span
	start   time.Time
	carrier carrier
	body    io.ReadCloser
	status  int
	done    atomic.Bool
	attrs   []attribute.KeyValue // the metric's, without status and error
	buf     [6]attribute.KeyValue
}

func (r *attemptRecord) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	switch {
	case err == io.EOF:
		r.finish(r.status, nil)
	case err != nil:
		r.finish(r.status, err)
	}
	return n, err
}

func (r *attemptRecord) Close() error {
	err := r.body.Close()
	r.finish(r.status, nil)
	return err
}

func (r *attemptRecord) finish(status int, err error) {
	if !r.done.CompareAndSwap(false, true) {
		return
	}
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
	r.span.End()
	r.in.attemptDuration.Record(r.ctx, time.Since(r.start).Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}
