package payments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"
	"time"
)

// This file holds what runs around each HTTP attempt: the attempt transport
// (middleware, attempt timeout, the headers the SDK owns), the per-call state
// the retry hooks read, and the types middleware and observers see.

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
	st, ok := ctx.Value(stateKey{}).(*callState)
	if !ok {
		return Attempt{}, false
	}
	return Attempt{Operation: *st.op, Number: max(st.attempts, 1), IdempotencyKey: st.key}, true
}

// Middleware sees every HTTP attempt: the request on its way out, and the
// response or error that comes back. It calls next to send the request on,
// and may add headers (trace context), time the attempt or record its
// outcome. The headers the SDK owns (Authorization, Idempotency-Key,
// Content-Type, Accept, User-Agent) are set again after it, so it can neither
// remove nor replace them. It must leave the response body to the SDK (it
// may wrap it). Read the attempt's facts with AttemptFromContext.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

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
	// Waited is how long the operation waited for its turn under the
	// Client's rate limit (WithRateLimit) and for the pause a 429 imposed
	// on the Client, over all its attempts. The back-off between retries
	// is not included.
	Waited time.Duration
}

// WithMiddleware adds middleware that sees every HTTP attempt; see
// Middleware for what it can read and change. Given to NewClient it wraps
// every call; given to one call, that call. Client middleware runs first, in
// the order given (the first is the outermost), then the call's own, and the
// last one given is the closest to the network.
func WithMiddleware(mw ...Middleware) RequestOption {
	return bothOption{
		client:  func(c *clientConfig) error { c.middleware = append(c.middleware, mw...); return nil },
		request: func(r *requestConfig) { r.middleware = append(r.middleware, mw...) },
	}
}

// WithAttemptTimeout bounds each HTTP attempt, from sending the request to
// reading the whole answer; an attempt that runs out is retried like a
// dropped connection. The context you pass bounds the whole call, all
// attempts and the waits between them. Given to NewClient it applies to
// every call, given to one call to that call. Without it an attempt is
// bounded by the http.Client's Timeout: 60 s for the default one.
func WithAttemptTimeout(d time.Duration) RequestOption {
	return bothOption{
		client: func(c *clientConfig) error {
			if d <= 0 {
				return fmt.Errorf("%w: WithAttemptTimeout(%s) must be positive", ErrInvalidConfig, d)
			}
			c.attemptTimeout = d
			return nil
		},
		request: func(r *requestConfig) { r.attemptTimeout = d },
	}
}

// WithObserver makes the Client call obs at the start of every operation:
// tracing and metrics (see the paymentsotel package). Several observers
// nest in the order given: the first sees the operation first and its end
// last. A failure found before sending (invalid params or options) is not an
// operation and reaches no observer.
func WithObserver(obs OperationObserver) Option {
	return optionFunc(func(c *clientConfig) error {
		if obs != nil {
			c.observers = append(c.observers, obs)
		}
		return nil
	})
}

// defaultTransport pools enough idle connections per host for many
// goroutines (net/http keeps 2) and bounds every phase of an attempt.
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// sharedClient returns a copy of hc (its transport, timeout and cookie jar)
// that the retry layer may use without harming other calls:
//
//   - it follows no redirect, whatever hc's policy: a redirect answers the
//     call as an *APIError, so the bearer token never follows a 3xx to
//     another URL (net/http would resend it to the same host over plain
//     http) and a redirect loop costs one request;
//   - its transport cannot be told to close idle connections: go-retryablehttp
//     closes them whenever a call ends in an error, which would empty the
//     pool every other call shares and multiply new connections during an
//     outage. Client.Close closes them instead.
//
// Its transport also runs each attempt's middleware and attempt timeout.
func sharedClient(hc *http.Client, mw []Middleware) *http.Client {
	shared := *hc
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	shared.Transport = attemptTransport{rt: rt, middleware: mw}
	shared.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &shared
}

// attemptTransport runs one attempt: the attempt timeout, the client's and
// the call's middleware, then the headers the SDK owns set again, then rt. It
// has no CloseIdleConnections (see sharedClient).
type attemptTransport struct {
	rt         http.RoundTripper
	middleware []Middleware
}

func (t attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st, ok := req.Context().Value(stateKey{}).(*callState)
	if !ok || (len(t.middleware) == 0 && len(st.middleware) == 0 && st.attemptTimeout == 0) {
		return t.rt.RoundTrip(req)
	}
	cancel := context.CancelFunc(nil)
	if st.attemptTimeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), st.attemptTimeout)
		req = req.WithContext(ctx)
	}
	next := func(r *http.Request) (*http.Response, error) {
		for name, v := range st.owned {
			if !slices.Equal(r.Header[name], v) {
				r = r.Clone(r.Context())
				maps.Copy(r.Header, st.owned)
				break
			}
		}
		return t.rt.RoundTrip(r)
	}
	for _, mw := range slices.Backward(slices.Concat(t.middleware, st.middleware)) {
		inner := next
		next = func(r *http.Request) (*http.Response, error) { return mw(r, inner) }
	}
	resp, err := next(req)
	switch {
	case cancel == nil:
	case err != nil || resp == nil:
		cancel()
	default:
		resp.Body = cancelOnClose{resp.Body, cancel}
	}
	return resp, err
}

// cancelOnClose ends an attempt's context when its body is closed: the
// attempt timeout covers reading the answer too.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// resultOf is what an OperationObserver learns of a finished call.
func resultOf(st *callState, r *Response, err error) OperationResult {
	res := OperationResult{Err: err, IdempotencyKey: st.key, Attempts: st.attemptsMade(), Waited: st.waited}
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
type hook func(ctx context.Context, st *callState) (context.Context, func(*Response, error))

// observerHook runs an OperationObserver as a hook.
func observerHook(obs OperationObserver) hook {
	return func(ctx context.Context, st *callState) (context.Context, func(*Response, error)) {
		ctx, end := obs(ctx, *st.op)
		return ctx, func(r *Response, err error) { end(resultOf(st, r, err)) }
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
	return func(ctx context.Context, st *callState) (context.Context, func(*Response, error)) {
		ends := make([]func(*Response, error), len(hooks))
		for i, h := range hooks {
			ctx, ends[i] = h(ctx, st)
		}
		return ctx, func(r *Response, err error) {
			for _, end := range slices.Backward(ends) {
				end(r, err)
			}
		}
	}
}

// callState travels in the request context so that the retry hooks and the
// attempt transport, which the client shares between all calls, see each
// call's own facts.
type callState struct {
	// Context is the call's context; the callState is the context of its
	// requests, so that the hooks find it (see Value).
	context.Context
	op             *Operation
	path           string
	key            string       // the Idempotency-Key sent, or ""
	owned          http.Header  // the headers the SDK owns, restored after middleware
	retryable      bool         // a request that may be sent twice
	attempts       int          // attempts the retry loop made; waiting for one is not one
	written        atomic.Int32 // requests written on the wire, net/http's own re-sends included
	writtenBefore  int32        // written when the current attempt started
	resent         int          // writes beyond one in an attempt: net/http's re-sends
	trace          httptrace.ClientTrace
	attemptTimeout time.Duration
	middleware     []Middleware // the call's own, run after the client's

	maxRetries       int
	waitMin, waitMax time.Duration
	backoff          time.Duration // the wait before the next retry
	retryCost        int           // what the last retry spent of the budget
	budgetExhausted  bool          // a retry was due, and the budget was empty
	waited           time.Duration // see OperationResult.Waited
}

// wroteRequest counts a request written whole on the wire (an
// httptrace.ClientTrace hook): net/http writes a replayable request a second
// time, within one attempt, when a reused connection turns out dead.
func (st *callState) wroteRequest(info httptrace.WroteRequestInfo) {
	if info.Err == nil {
		st.written.Add(1)
	}
}

// attemptStarted and attemptEnded bracket one attempt of the retry loop, to
// count the transport's re-sends within it.
func (st *callState) attemptStarted() { st.writtenBefore = st.written.Load() }

func (st *callState) attemptEnded() {
	if w := st.written.Load() - st.writtenBefore; w > 1 {
		st.resent += int(w - 1)
	}
	st.writtenBefore = st.written.Load()
}

// attemptsMade is the number of attempts the call made, as reported: the
// retry loop's, plus every request net/http re-sent on its own, which the
// service may have processed as well.
func (st *callState) attemptsMade() int { return st.attempts + st.resent }

// Value returns the callState itself for stateKey, and the call context's
// values for any other key.
func (st *callState) Value(key any) any {
	if key == (stateKey{}) {
		return st
	}
	return st.Context.Value(key)
}

type stateKey struct{}

func stateOf(ctx context.Context) *callState {
	if st, ok := ctx.Value(stateKey{}).(*callState); ok {
		return st
	}
	return &callState{op: &Operation{}}
}
