package request

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// Config is what a Client configures of its request path.
type Config struct {
	// HTTPClient sends every attempt, used as given except for its
	// redirect policy and idle-connection closing (see sharedClient).
	HTTPClient *http.Client
	// Middleware is the client's own, run before each call's.
	Middleware []Middleware
	// Budget is the retry budget, or nil for none.
	Budget *Budget
	// Limiter is the client-side rate limit, or nil for none.
	Limiter *rate.Limiter
	// MaxPause bounds the pause a 429 with a Retry-After imposes on every
	// call of the Client.
	MaxPause time.Duration
	// OnRetry, when set, is called before each retry is sent (attempt is
	// its number, from 2): the Client logs it.
	OnRetry func(c *Call, attempt int)
}

// Pipeline runs the attempts of every call of one Client: go-retryablehttp
// runs the loop, and its hooks carry the policy. go-retryablehttp's own
// limit and back-off are disabled, since they are one setting for every
// call of the Client: which outcome is retried is retry.Check's, how many
// retries and how long the waits are is the call's (its Call carries
// them), and whether a retry is affordable is the budget's.
type Pipeline struct {
	http    *retryablehttp.Client
	budget  *Budget
	limiter *rate.Limiter
	pause   pause
	onRetry func(c *Call, attempt int)
	// now and sleep are the clock every wait reads and the way it waits,
	// so that tests compute the waits exactly on a fake clock.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns the request path of a Client.
func New(cfg Config) *Pipeline {
	p := &Pipeline{budget: cfg.Budget, limiter: cfg.Limiter, onRetry: cfg.OnRetry, now: time.Now, sleep: sleep}
	p.pause.max = cfg.MaxPause
	p.http = &retryablehttp.Client{
		HTTPClient: sharedClient(cfg.HTTPClient, cfg.Middleware),
		Logger:     nil, // go-retryablehttp's own logger writes URLs to stderr
		// Each call's own limit is enforced by checkRetry.
		RetryMax:   math.MaxInt32,
		CheckRetry: p.checkRetry,
		// The wait is the call's (c.backoff), waited in prepareRetry with
		// the client-wide waits, where the call's state is at hand.
		Backoff:        func(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 },
		PrepareRetry:   p.prepareRetry,
		ErrorHandler:   keepLastResponse,
		RequestLogHook: p.onAttempt,
	}
	return p
}

// SetClock makes the Pipeline read the time from now and wait with sleep
// (tests). Call it before the Pipeline is used.
func (p *Pipeline) SetClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	if now != nil {
		p.now = now
	}
	if sleep != nil {
		p.sleep = sleep
	}
}

// Retrying returns the go-retryablehttp client under the Pipeline (tests).
func (p *Pipeline) Retrying() *retryablehttp.Client { return p.http }

// Budget returns the retry budget, or nil (tests).
func (p *Pipeline) Budget() *Budget { return p.budget }

// Limiter returns the rate limit, or nil (tests).
func (p *Pipeline) Limiter() *rate.Limiter { return p.limiter }

// MaxPause is the longest pause a 429 imposes (tests).
func (p *Pipeline) MaxPause() time.Duration { return p.pause.max }

// Do sends req, c's request, with its retries: it waits for the client-wide
// pause and the rate limit before the first attempt, and go-retryablehttp
// runs the rest through the hooks below.
func (p *Pipeline) Do(c *Call, req *retryablehttp.Request) (*http.Response, error) {
	if err := p.beforeAttempt(c, 0); err != nil {
		return nil, err
	}
	return p.http.Do(req)
}

// checkRetry runs after each attempt. It notes a 429's pause for the whole
// Client and refunds the budget on a success; then it decides whether to
// retry: never once the context has ended, only an outcome retry.Check
// allows, within the call's MaxRetries, and only if the retry budget has
// the tokens (otherwise the call ends now, marked as budget-exhausted). A
// retry's wait is computed here, while the response is at hand.
func (p *Pipeline) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c := callOf(ctx)
	c.attemptEnded()
	p.pause.note(resp, p.now())
	if resp != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 && p.budget != nil {
		if c.retryCost > 0 {
			p.budget.refund(c.retryCost)
		} else {
			p.budget.refund(p.budget.SuccessRefund)
		}
	}
	ok, cerr := retry.Check(ctx, c.Retryable, resp, err)
	if !ok || cerr != nil || c.attempts > c.MaxRetries {
		return false, cerr
	}
	if p.budget != nil {
		cost := p.budget.costOf(err)
		if !p.budget.spend(cost) {
			c.BudgetExhausted = true
			return false, nil
		}
		c.retryCost = cost
	}
	c.backoff = retry.Backoff(c.WaitMin, c.WaitMax, c.attempts-1, resp, p.now())
	return true, nil
}

// prepareRetry waits before a retry: the back-off, then what every attempt
// waits for (see beforeAttempt). An error ends the call.
func (p *Pipeline) prepareRetry(req *http.Request) error {
	c := callOf(req.Context())
	return p.beforeAttempt(c, c.backoff)
}

// onAttempt runs just before each attempt is sent: it counts it, and
// reports a retry.
func (p *Pipeline) onAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	c := callOf(req.Context())
	c.attemptStarted(attempt + 1)
	if attempt > 0 && p.onRetry != nil {
		p.onRetry(c, attempt+1)
	}
}

// keepLastResponse runs when go-retryablehttp gives up. It hands back the
// final response with its status and body intact, so the caller gets a full
// *APIError, and passes connection and context errors through (a wait that
// the context ended included: the last response's body is drained by then).
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

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Budget is a Client's retry budget in use: a token bucket shared by every
// call of one Client, so that many goroutines cannot all retry into an
// outage at once (the retry quota of the AWS SDK for Go v2's standard
// retry mode). payments.RetryBudget documents the fields.
type Budget struct {
	Tokens, RetryCost, TimeoutCost, SuccessRefund int
	left                                          atomic.Int64
}

// NewBudget returns a full budget.
func NewBudget(tokens, retryCost, timeoutCost, successRefund int) *Budget {
	b := &Budget{Tokens: tokens, RetryCost: retryCost, TimeoutCost: timeoutCost, SuccessRefund: successRefund}
	b.left.Store(int64(tokens))
	return b
}

// spend takes cost tokens and reports true, or takes none and reports false
// when fewer are left.
func (b *Budget) spend(cost int) bool {
	for {
		left := b.left.Load()
		if left < int64(cost) {
			return false
		}
		if b.left.CompareAndSwap(left, left-int64(cost)) {
			return true
		}
	}
}

// refund puts n tokens back, up to the capacity.
func (b *Budget) refund(n int) {
	for n > 0 {
		left := b.left.Load()
		if left >= int64(b.Tokens) {
			return
		}
		if b.left.CompareAndSwap(left, min(left+int64(n), int64(b.Tokens))) {
			return
		}
	}
}

// costOf is what a retry after err (nil for an error status) spends.
func (b *Budget) costOf(err error) int {
	var ne net.Error
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		return b.TimeoutCost
	}
	return b.RetryCost
}
