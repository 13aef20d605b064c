// Package request sends one call of a payments.Client, with its retries.
//
// # The path of a call, file by file
//
// A call to Payments.Initiate goes out and comes back through six files of
// the module, and no other:
//
//  1. payments.go: PaymentsService.Initiate checks the params and names
//     the operation (method, path, the checks its answer must pass).
//  2. client.go: Client.do applies the call's options, makes the
//     idempotency key once, encodes the body, starts the observers, builds
//     the http.Request with the headers the SDK owns, and hands it to
//     Call.Do; then Client.send reads the answer.
//  3. internal/request/request.go: this file. Call.Do gives the call its
//     own go-retryablehttp client, whose hooks carry the retry policy
//     (CheckRetry, Backoff, RetryMax, PrepareRetry, ResponseLogHook,
//     ErrorHandler), and whose http.Client's transport is the Call itself:
//     Call.RoundTrip runs one attempt (its timeout, the middleware, the
//     headers the SDK owns set again) on the Client's transport.
//  4. internal/request/wait.go: what every call of a Client shares: the
//     retry budget, the pause a 429 imposes, the rate limit, the waits.
//  5. internal/retry/retry.go: which outcomes are retried, how long a
//     back-off lasts, Retry-After.
//  6. envelope.go: Client.decode reads the body and decodes the envelope
//     and the payment in one pass, or makes the typed error.
//
// Along the way a step calls helpers that check or convert one value and
// return: the params' checks (validate.go), the body's extra fields
// (bodyfields.go), what the answer holds that the SDK does not assume
// (surprise.go), the payment's wire form (quote.go), the observers
// (observe.go). TestInitiatePathFiles (client_path_test.go, in the root
// package) reads the files on the stack wherever the call reaches outside
// code (the round trip, the clock, the waits, the reading of each answer)
// through a retry, and fails if one is not named above, or if more than six
// are named.
//
// The call's state lives in its Call, which the hooks are methods of: no
// context carries it. The Client's shared parts (the transport, the budget,
// the pause, the limiter, the clock) are in Shared. A Client reuses the Call
// of a call that succeeded for a later one (Call.Reuse); what net/http may
// still read once the call has its answer (the body's reader, the
// Idempotency-Key header's value, the trace) is the call's wire, made for
// each call and never reused.
package request

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// Middleware is payments.Middleware: it sees one attempt, and calls next to
// send the request on.
type Middleware = func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// Call is one call of a Client: what it sends, its retry settings, and what
// happened to it. Make it with its fields (or Reuse one), then call Do once.
type Call struct {
	// Shared is the Client's.
	Shared *Shared
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
	// WaitHeader names the header in which a 429 of the call said how long
	// to wait, when it was not Retry-After (retry.WaitHeader), and
	// WaitHeaderRead whether that wait was honoured; "" when no such 429
	// came.
	WaitHeader     string
	WaitHeaderRead bool

	ctx        context.Context    // the call's, which every wait honours
	endAttempt context.CancelFunc // ends the last attempt's context (End)
	attempts   int32              // attempts made (RoundTrip); a wait is not one
	retryCost  int32              // what the last retry spent of the budget
	failed     bool               // an attempt ended in a transport error (Reusable)

	req retryablehttp.Request // the request as go-retryablehttp sends it
	// wire is what this call hands to net/http beside the request; made
	// for this call only, never reused (see wire).
	wire *wire
	// kept is what c made for itself and keeps when it is reused: its
	// go-retryablehttp client and the hooks bound to c (see kept).
	kept *kept

	// Requests written on the wire (wire.written) when the attempt before
	// ended, and the writes beyond one in an attempt: net/http writes a
	// replayable request a second time, within one attempt, when a reused
	// connection turns out dead, and Attempts must never hide a request
	// the service may have processed.
	writtenBefore int32
	resent        int32
}

// kept is what a Call makes once, on its first Do, and keeps from one
// call to the next (Reuse): its own go-retryablehttp client and that
// client's http.Client, set again for each call, and the hooks bound to
// the Call. net/http never sees any of it, nor does the caller: only the
// Call's own methods reach it.
type kept struct {
	retrying     retryablehttp.Client
	http         http.Client
	checkRetry   retryablehttp.CheckRetry
	prepareRetry retryablehttp.PrepareRetry
	logRetry     retryablehttp.RequestLogHook
}

// wire is what a call hands to net/http beside the http.Request: the
// reader of the first attempt's body, the Idempotency-Key header's value,
// and the trace that counts the requests written. net/http's connection
// goroutines may read them until the answer's body is closed, and, after a
// transport error or an answer that came before the body was written, for
// an unknown while longer: so a wire is made for one call and never
// reused, unlike the Call (Reuse). A call without a body, a key or a
// trace makes none.
type wire struct {
	body    []byte
	reader  bytes.Reader // the body of the first attempt
	bodies  int32        // bodies handed out
	key     [1]string    // the Idempotency-Key header's value
	trace   httptrace.ClientTrace
	written atomic.Int32 // requests written (trace.WroteRequest)
}

// Reuse makes c the call next describes, as if it were new, except that it
// keeps what it made for itself on an earlier call (kept). The Client hands
// a Call to Reuse only once it is Reusable and its answer is read; nothing
// that the caller or net/http may still hold points into a Call.
func (c *Call) Reuse(next Call) {
	k := c.kept
	*c = next
	c.kept = k
}

// Reusable reports whether c may be reused (Reuse) once its answer is read
// and its body closed: not after an attempt that ended in a transport error,
// whose request net/http may still be writing.
func (c *Call) Reusable() bool { return !c.failed }

// wireOf is c's wire, made on first use.
func (c *Call) wireOf() *wire {
	if c.wire == nil {
		c.wire = new(wire)
	}
	return c.wire
}

// written is the number of requests written on the wire so far (0 when
// they are not counted).
func (c *Call) written() int32 {
	if c.wire == nil {
		return 0
	}
	return c.wire.written.Load()
}

// KeyHeader is the Idempotency-Key header's value, {c.Key}, held in c's
// wire.
func (c *Call) KeyHeader() []string {
	w := c.wireOf()
	w.key[0] = c.Key
	return w.key[:]
}

// Context is the call's context: the one Do was given.
func (c *Call) Context() context.Context { return c.ctx }

// Attempts is the number of attempts the call made, as reported: its own,
// plus every request net/http re-sent on its own, which the service may
// have processed as well.
func (c *Call) Attempts() int { return int(c.attempts + c.resent) }

// CountWrites returns ctx with a trace that counts the requests written on
// the wire (see Call.written). The call's requests must carry it.
func (c *Call) CountWrites(ctx context.Context) context.Context {
	w := c.wireOf()
	w.trace.WroteRequest = w.wroteRequest
	return httptrace.WithClientTrace(ctx, &w.trace)
}

// wroteRequest is the trace's WroteRequest: it counts a request written.
func (w *wire) wroteRequest(info httptrace.WroteRequestInfo) {
	if info.Err == nil {
		w.written.Add(1)
	}
}

// Do sends req, with body (nil for none), and its retries. It first waits
// for what every attempt waits for (the Client's pause, the rate limit);
// then go-retryablehttp runs the attempts, with c's settings and hooks. The
// response, when there is one, is the last attempt's, its body unread.
func (c *Call) Do(req *http.Request, body []byte) (*http.Response, error) {
	c.ctx = req.Context()
	c.setUp()
	c.req = retryablehttp.Request{Request: req}
	if body != nil {
		w := c.wireOf()
		w.body = body
		if err := c.req.SetBody(retryablehttp.ReaderFunc(w.nextBody)); err != nil {
			return nil, err
		}
	}
	if err := c.Shared.beforeAttempt(c); err != nil {
		return nil, err
	}
	return c.kept.retrying.Do(&c.req)
}

// setUp makes the call's go-retryablehttp client, with c's settings and
// hooks: on c's first call it makes them (kept), on a reused Call it sets
// them again.
func (c *Call) setUp() {
	s := c.Shared
	k := c.kept
	if k == nil {
		k = &kept{}
		k.checkRetry, k.prepareRetry, k.logRetry = c.checkRetry, c.prepareRetry, c.logRetry
		c.kept = k
	}
	// The call's own http.Client: the Client's, except that it follows no
	// redirect, whatever the Client's policy (a redirect answers the call
	// as an *APIError, so the bearer token never follows a 3xx, and a
	// redirect loop costs one request), and that its transport is c, which
	// has no CloseIdleConnections: go-retryablehttp closes idle connections
	// whenever a call fails, which would empty the pool that every other
	// call shares (payments.Client.Close closes them). c.RoundTrip applies
	// the Client's Timeout to each attempt.
	k.http = http.Client{Transport: c, Jar: s.HTTPClient.Jar, CheckRedirect: noRedirect}
	k.retrying = retryablehttp.Client{
		HTTPClient:   &k.http,
		Logger:       nil, // go-retryablehttp's own logger writes URLs to stderr
		RetryMax:     c.MaxRetries,
		RetryWaitMin: c.WaitMin,
		RetryWaitMax: c.WaitMax,
		CheckRetry:   k.checkRetry,
		Backoff:      s.backoff,
		// A retry waits, after the back-off, for what every attempt waits
		// for.
		PrepareRetry: k.prepareRetry,
		// ResponseLogHook notes a 429's pause for the whole Client.
		ResponseLogHook: s.noteResponse,
		ErrorHandler:    keepLastResponse,
	}
	if s.OnRetry != nil {
		k.retrying.RequestLogHook = k.logRetry
	}
}

// Retrying returns the call's go-retryablehttp client (tests).
func (c *Call) Retrying() *retryablehttp.Client {
	c.setUp()
	return &c.kept.retrying
}

// nextBody is the body of the next send: go-retryablehttp asks for one to
// learn its length, then for each attempt, and net/http for each re-send.
// The first two are the same reader, rewound (the first is only measured);
// every later one is new, since net/http may still be closing the one
// before. Each is a *bytes.Reader, which go-retryablehttp puts in
// io.NopCloser and net/http knows to be in memory: it then writes the
// headers and the body at once, and does not report a request the service
// received whole as failed to write.
func (w *wire) nextBody() (io.Reader, error) {
	w.bodies++
	if w.bodies <= 2 {
		w.reader.Reset(w.body)
		return &w.reader, nil
	}
	return bytes.NewReader(w.body), nil
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// checkRetry is the call's CheckRetry, run after each attempt. It refunds
// the budget on a success, then decides whether to retry: never once the
// call's context has ended, only an outcome retry.Check allows, within the
// call's MaxRetries, and only if the retry budget has the tokens (otherwise
// the call ends now, marked as budget-exhausted).
func (c *Call) checkRetry(_ context.Context, resp *http.Response, err error) (bool, error) {
	written := c.written()
	if w := written - c.writtenBefore; w > 1 {
		c.resent += w - 1
	}
	c.writtenBefore = written
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests && c.WaitHeader == "" {
		c.WaitHeader, c.WaitHeaderRead = retry.WaitHeader(resp.Header)
	}
	b := c.Shared.Budget
	if resp != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 && b != nil {
		if c.retryCost > 0 {
			b.refund(int(c.retryCost))
		} else {
			b.refund(b.SuccessRefund)
		}
	}
	ok, cerr := retry.Check(c.ctx, c.Retryable, resp, err)
	if !ok || cerr != nil || int(c.attempts) > c.MaxRetries {
		return false, cerr
	}
	if b != nil {
		cost := b.costOf(err)
		if !b.spend(cost) {
			c.BudgetExhausted = true
			return false, nil
		}
		c.retryCost = int32(cost)
	}
	return true, nil
}

// prepareRetry is the call's PrepareRetry: after the back-off, a retry
// waits for what every attempt waits for (see Shared.beforeAttempt). An
// error ends the call.
func (c *Call) prepareRetry(*http.Request) error { return c.Shared.beforeAttempt(c) }

// logRetry is the call's RequestLogHook when the Client logs: it reports
// each retry (attempt counts from 0).
func (c *Call) logRetry(_ retryablehttp.Logger, _ *http.Request, attempt int) {
	if attempt > 0 {
		c.Shared.OnRetry(c, attempt+1)
	}
}

// keepLastResponse is the ErrorHandler, run when go-retryablehttp gives
// up. It hands back the final response with its status and body intact,
// so the caller gets a full *APIError, and passes connection and context
// errors through (a wait that the context ended included: the last
// response's body is drained by then).
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil && err != nil && isContextErr(err) {
		resp.Body.Close()
		return nil, err
	}
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

// Attempt is what middleware learns of the attempt it sees
// (payments.AttemptFromContext).
type Attempt struct {
	Name, Method, Template string
	Number                 int
	Key                    string
}

type attemptKey struct{}

// AttemptOf returns the attempt whose request ctx is, if any. Only the
// requests that middleware sees carry it.
func AttemptOf(ctx context.Context) (Attempt, bool) {
	a, ok := ctx.Value(attemptKey{}).(Attempt)
	return a, ok
}

// RoundTrip runs one attempt: it counts it, bounds it by the call's attempt
// timeout (or the Client's http.Client Timeout), runs the Client's then the
// call's middleware, sets the headers the SDK owns again, and sends the
// request on the Client's transport.
func (c *Call) RoundTrip(req *http.Request) (*http.Response, error) {
	c.End() // the attempt before, whose answer go-retryablehttp has drained
	c.attempts++
	s := c.Shared
	timeout := c.AttemptTimeout
	if timeout == 0 {
		timeout = s.HTTPClient.Timeout
	}
	hasMiddleware := len(s.Middleware) > 0 || len(c.Middleware) > 0
	if timeout == 0 && !hasMiddleware {
		resp, err := s.transport.RoundTrip(req)
		c.failed = c.failed || err != nil
		return resp, err
	}
	ctx, cancel := req.Context(), context.CancelFunc(nil)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	if hasMiddleware {
		ctx = context.WithValue(ctx, attemptKey{}, Attempt{Name: c.Name, Method: c.Method, Template: c.Template, Number: int(c.attempts), Key: c.Key})
	}
	req = req.WithContext(ctx)
	var resp *http.Response
	var err error
	if !hasMiddleware {
		resp, err = s.transport.RoundTrip(req)
	} else {
		// What middleware is handed (next included) reaches nothing of c,
		// which is reused once the call ends (Reuse).
		owned, transport := c.Owned, s.transport
		next := func(r *http.Request) (*http.Response, error) {
			for name, v := range owned {
				if !slices.Equal(r.Header[name], v) {
					r = r.Clone(r.Context())
					maps.Copy(r.Header, owned)
					break
				}
			}
			return transport.RoundTrip(r)
		}
		for _, mw := range slices.Backward(slices.Concat(s.Middleware, c.Middleware)) {
			inner := next
			next = func(r *http.Request) (*http.Response, error) { return mw(r, inner) }
		}
		resp, err = next(req)
	}
	c.failed = c.failed || err != nil
	if cancel != nil && (err != nil || resp == nil) {
		cancel()
	} else {
		c.endAttempt = cancel
	}
	return resp, err
}

// End ends the call's last attempt, whose timeout covers the reading of
// its answer: call it once the answer is read.
func (c *Call) End() {
	if c.endAttempt != nil {
		c.endAttempt()
		c.endAttempt = nil
	}
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
