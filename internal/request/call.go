// Package request is the request path under payments.Client, in three
// files: call.go, the state of one call (the context its attempts run
// under, its attempts counted on the wire) and the transport each attempt
// runs through (middleware, attempt timeout, the headers the SDK owns);
// retry.go, go-retryablehttp with its hooks carrying the retry policy and
// the retry budget; wait.go, what an attempt waits for (the back-off, the
// pause a 429 imposes on the whole Client, the rate limit).
//
// The root package keeps the options that configure it and the types its
// callers see (Operation, Attempt, Middleware, Response).
package request

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"
	"time"
)

// Middleware is payments.Middleware: it sees one attempt, and calls next to
// send the request on.
type Middleware = func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// Call is the state of one call. It travels as the context of its requests
// so that the retry hooks and the attempt transport, which a Client shares
// between all its calls, see each call's own facts.
type Call struct {
	// Context is the call's context; the Call is the context of its
	// requests, so that the hooks find it (see Value).
	context.Context
	// Name, Method and Template describe the operation
	// ("payments.initiate", POST, "/payments/initiate").
	Name, Method, Template string
	// Path is the path sent, ids escaped in, query included.
	Path string
	// Key is the Idempotency-Key sent, or "".
	Key string
	// Owned are the headers the SDK owns, set again after middleware; nil
	// when no middleware runs.
	Owned http.Header
	// Retryable: a request that may be sent twice.
	Retryable bool
	// AttemptTimeout bounds each attempt (0: the http.Client's Timeout).
	AttemptTimeout time.Duration
	// Middleware is the call's own, run after the client's.
	Middleware []Middleware
	// MaxRetries, WaitMin and WaitMax are the call's retry settings.
	MaxRetries       int
	WaitMin, WaitMax time.Duration

	// BudgetExhausted: a retry was due, and the budget was empty.
	BudgetExhausted bool
	// Waited is the time spent waiting for the rate limit and a 429's
	// pause (payments.OperationResult.Waited).
	Waited time.Duration

	attempts      int          // attempts the retry loop made; waiting for one is not one
	written       atomic.Int32 // requests written on the wire, net/http's own re-sends included
	writtenBefore int32        // written when the current attempt started
	resent        int          // writes beyond one in an attempt: net/http's re-sends
	trace         httptrace.ClientTrace
	backoff       time.Duration // the wait before the next retry
	retryCost     int           // what the last retry spent of the budget
}

// CountWrites returns ctx with a trace that counts the requests written on
// the wire: net/http writes a replayable request a second time, within one
// attempt, when a reused connection turns out dead, and Attempts must never
// hide a request the service may have processed.
func (c *Call) CountWrites(ctx context.Context) context.Context {
	c.trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			c.written.Add(1)
		}
	}
	return httptrace.WithClientTrace(ctx, &c.trace)
}

// attemptStarted and attemptEnded bracket one attempt of the retry loop, to
// count the transport's re-sends within it.
func (c *Call) attemptStarted(n int) {
	c.attempts = n
	c.writtenBefore = c.written.Load()
}

func (c *Call) attemptEnded() {
	if w := c.written.Load() - c.writtenBefore; w > 1 {
		c.resent += int(w - 1)
	}
	c.writtenBefore = c.written.Load()
}

// Attempts is the number of attempts the call made, as reported: the retry
// loop's, plus every request net/http re-sent on its own, which the service
// may have processed as well.
func (c *Call) Attempts() int { return c.attempts + c.resent }

// Number is the number of the attempt under way, from 1.
func (c *Call) Number() int { return max(c.attempts, 1) }

type callKey struct{}

// Value returns the Call itself for its own key, and the call context's
// values for any other key.
func (c *Call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// CallOf returns the Call whose request ctx is, if any.
func CallOf(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(callKey{}).(*Call)
	return c, ok
}

func callOf(ctx context.Context) *Call {
	if c, ok := CallOf(ctx); ok {
		return c
	}
	return &Call{Context: ctx}
}

// DefaultTransport pools enough idle connections per host for many
// goroutines (net/http keeps 2) and bounds every phase of an attempt.
func DefaultTransport() *http.Transport {
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
	c, ok := CallOf(req.Context())
	if !ok || (len(t.middleware) == 0 && len(c.Middleware) == 0 && c.AttemptTimeout == 0) {
		return t.rt.RoundTrip(req)
	}
	cancel := context.CancelFunc(nil)
	if c.AttemptTimeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), c.AttemptTimeout)
		req = req.WithContext(ctx)
	}
	next := func(r *http.Request) (*http.Response, error) {
		for name, v := range c.Owned {
			if !slices.Equal(r.Header[name], v) {
				r = r.Clone(r.Context())
				maps.Copy(r.Header, c.Owned)
				break
			}
		}
		return t.rt.RoundTrip(r)
	}
	for _, mw := range slices.Backward(slices.Concat(t.middleware, c.Middleware)) {
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

// Inner returns the transport that an attempt transport wraps, or rt when
// rt is not one (tests).
func Inner(rt http.RoundTripper) http.RoundTripper {
	if t, ok := rt.(attemptTransport); ok {
		return t.rt
	}
	return rt
}
