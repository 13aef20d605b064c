package payments

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/request"
)

// This file holds what watches the calls: the types middleware and
// observers see, and the hooks that run around each operation (the
// observers, then WithLogger's log line). The request path itself is in
// internal/request.

// Operation names an API operation, for middleware, observers and logs.
type Operation struct {
	// Name is "<resource>.<action>", such as "payments.initiate", or "do"
	// for Client.Do.
	Name string
	// Method is the HTTP method.
	Method string
	// PathTemplate is the path with its ids as placeholders, such as
	// "/payments/recipients/{id}": low-cardinality, fit for a metric or span
	// attribute. It is empty for Client.Do.
	PathTemplate string
}

// Attempt is one HTTP attempt of an operation, as middleware sees it. It
// embeds the Operation: attempt.Name is the operation's name
// ("payments.initiate"), attempt.Method and attempt.PathTemplate its method
// and path template.
type Attempt struct {
	Operation
	// Number counts the call's attempts from 1; above 1 the attempt is a
	// retry.
	Number int
	// IdempotencyKey is the key the call sends, or "".
	IdempotencyKey string
}

// AttemptFromContext returns the attempt a request belongs to, from the
// context of a request that middleware sees.
func AttemptFromContext(ctx context.Context) (Attempt, bool) {
	a, ok := request.AttemptOf(ctx)
	if !ok {
		return Attempt{}, false
	}
	return Attempt{Operation: Operation{Name: a.Name, Method: a.Method, PathTemplate: a.Template}, Number: a.Number, IdempotencyKey: a.Key}, true
}

// Middleware sees every HTTP attempt: the request on its way out, and the
// response or error that comes back. It calls next to send the request on,
// and may add headers (trace context), time the attempt or record its
// outcome. The headers the SDK owns (Authorization, Idempotency-Key,
// Content-Type, Accept, User-Agent) are set again after it, so it can neither
// remove nor replace them. It must leave the response body to the SDK (it
// may wrap it). Read the attempt's facts with AttemptFromContext.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// middlewareFuncs converts mw for the request path.
func middlewareFuncs(mw []Middleware) []request.Middleware {
	if len(mw) == 0 {
		return nil
	}
	out := make([]request.Middleware, len(mw))
	for i, m := range mw {
		out[i] = m
	}
	return out
}

// operationOf is the Operation a call runs.
func operationOf(st *request.Call) Operation {
	return Operation{Name: st.Name, Method: st.Method, PathTemplate: st.Template}
}

// OperationObserver is called when an operation starts, before its first
// attempt. It returns the context the attempts run under (carrying a tracing
// span, say) and a function the Client calls once when the operation ends.
type OperationObserver func(ctx context.Context, op Operation) (context.Context, func(OperationResult))

// OperationResult is how an operation ended.
type OperationResult struct {
	// Err is the operation's error, or nil.
	Err error
	// StatusCode is the final HTTP status, or 0 when none came.
	StatusCode int
	// Stan is the service's identifier of the operation, when it sent one.
	Stan string
	// IdempotencyKey is the key the call sent, or "".
	IdempotencyKey string
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// Surprises are what the answer held that the SDK does not assume
	// (docs/assumptions.md), every one met by this operation, in the order
	// met; nil when none. The operation's outcome does not depend on them.
	// The Client logs each kind and detail once (see WithLogger);
	// paymentsotel counts every one. Test: TestSurprisesReachObservers.
	Surprises []Surprise
	// Waited is how long the operation waited for its turn under the
	// Client's rate limit (WithRateLimit) and for the pause a 429 imposed
	// on the Client, over all its attempts. The back-off between retries
	// is not included.
	Waited time.Duration
}

// resultOf is what an OperationObserver learns of a finished call.
func resultOf(st *request.Call, r *Response, err error) OperationResult {
	res := OperationResult{Err: err, IdempotencyKey: st.Key, Attempts: st.Attempts(), Waited: st.Waited}
	res.StatusCode, res.Stan = outcomeOf(r, err)
	return res
}

// outcomeOf is the final status and stan of a call, from its response or its
// error (0 and "" when no answer came).
func outcomeOf(r *Response, err error) (status int, stan string) {
	var (
		apiErr *APIError
		merr   *MalformedResponseError
	)
	switch {
	case r != nil:
		return r.StatusCode, r.Stan
	case errors.As(err, &apiErr):
		return apiErr.StatusCode, apiErr.Stan
	case errors.As(err, &merr) && merr.Response != nil:
		return merr.Response.StatusCode, merr.Response.Stan
	}
	return 0, ""
}

// hook runs around one operation: it returns the context the attempts run
// under and the function called once when the operation ends. Every
// OperationObserver and the logger of WithLogger are hooks.
type hook func(ctx context.Context, st *request.Call) (context.Context, func(*Response, error, []Surprise))

// observerHook runs an OperationObserver as a hook.
func observerHook(obs OperationObserver) hook {
	return func(ctx context.Context, st *request.Call) (context.Context, func(*Response, error, []Surprise)) {
		ctx, end := obs(ctx, operationOf(st))
		return ctx, func(r *Response, err error, found []Surprise) {
			res := resultOf(st, r, err)
			res.Surprises = found
			end(res)
		}
	}
}

// chainHooks nests hooks into one, the first outermost (nil when there are
// none).
func chainHooks(hooks []hook) hook {
	switch len(hooks) {
	case 0:
		return nil
	case 1:
		return hooks[0]
	}
	return func(ctx context.Context, st *request.Call) (context.Context, func(*Response, error, []Surprise)) {
		ends := make([]func(*Response, error, []Surprise), len(hooks))
		for i, h := range hooks {
			ctx, ends[i] = h(ctx, st)
		}
		return ctx, func(r *Response, err error, found []Surprise) {
			for _, end := range slices.Backward(ends) {
				end(r, err, found)
			}
		}
	}
}

// logHook is WithLogger's observer: one line per operation, at debug level
// on success and warning level on failure.
func logHook(l *slog.Logger) hook {
	return func(ctx context.Context, st *request.Call) (context.Context, func(*Response, error, []Surprise)) {
		start := time.Now()
		return ctx, func(r *Response, err error, _ []Surprise) {
			level := slog.LevelDebug
			if err != nil {
				level = slog.LevelWarn
			}
			if l.Enabled(ctx, level) {
				l.LogAttrs(ctx, level, "payments: request", logAttrs(st, r, start, err)...)
			}
		}
	}
}

// logAttrs are the attributes of an operation's log line.
func logAttrs(st *request.Call, r *Response, start time.Time, err error) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("operation", st.Name),
		slog.String("method", st.Method),
		slog.String("path", pathOnly(st.Path)),
		slog.Int("attempts", st.Attempts()),
		slog.String("duration", time.Since(start).Round(time.Microsecond).String()),
	}
	if st.Waited > 0 {
		attrs = append(attrs, slog.String("waited", st.Waited.Round(time.Microsecond).String()))
	}
	status, stan := outcomeOf(r, err)
	attrs = append(attrs, slog.Int("status", status))
	if stan != "" {
		attrs = append(attrs, slog.String("stan", redact.String(stan, nil)))
	}
	if st.Key != "" {
		attrs = append(attrs, slog.String("idempotency_key", st.Key))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", redact.String(err.Error(), nil)))
	}
	return attrs
}

// logRetry is WithLogger's line for each retry, at info level.
func (c *Client) logRetry(st *request.Call, attempt int) {
	c.logger.LogAttrs(st.Context(), slog.LevelInfo, "payments: retrying request",
		slog.String("operation", st.Name), slog.String("method", st.Method),
		slog.String("path", pathOnly(st.Path)), slog.Int("attempt", attempt))
}
