package request

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// Shared is what every call of one payments.Client shares: its transport,
// its middleware, the retry budget, the client-side rate limit and the
// pause a 429 imposes. The limit and the pause are waits, not attempts: no
// attempt is counted and no middleware runs while a call waits, and the
// time shows as Call.Waited.
type Shared struct {
	// HTTPClient is the Client's: every attempt goes through its
	// Transport, bounded by its Timeout, with its Jar. Its redirect policy
	// is not used (see Call.Do).
	HTTPClient *http.Client
	// Middleware is the client's own, run before each call's.
	Middleware []Middleware
	// Budget is the retry budget, or nil for none.
	Budget *Budget
	// Limiter is the client-side rate limit, or nil for none.
	Limiter *rate.Limiter
	// OnRetry, when set, is called before each retry is sent (attempt is
	// its number, from 2): the Client logs it.
	OnRetry func(c *Call, attempt int)

	transport http.RoundTripper
	pause     pause
	// now and sleep are the clock every wait reads and the way it waits,
	// so that tests compute the waits exactly on a fake clock.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// backoff and noteResponse are the Backoff and ResponseLogHook of
	// every call, made once.
	backoff      retryablehttp.Backoff
	noteResponse retryablehttp.ResponseLogHook
}

// Init makes p, its exported fields set, ready for calls, and returns it;
// maxPause bounds the pause a 429 with a Retry-After imposes on every call.
func (p *Shared) Init(maxPause time.Duration) *Shared {
	p.transport = p.HTTPClient.Transport
	if p.transport == nil {
		p.transport = http.DefaultTransport
	}
	p.pause.max = maxPause
	p.now, p.sleep = time.Now, sleep
	p.backoff = func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		return retry.Backoff(min, max, attempt, resp, p.now())
	}
	p.noteResponse = func(_ retryablehttp.Logger, resp *http.Response) {
		if resp != nil && resp.StatusCode == http.StatusTooManyRequests { // the clock is read for a 429 only
			p.pause.note(resp, p.now())
		}
	}
	return p
}

// SetClock makes s read the time from now and wait with sleep (tests).
// Call it before s is used.
func (s *Shared) SetClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	if now != nil {
		s.now = now
	}
	if sleep != nil {
		s.sleep = sleep
	}
}

// MaxPause is the longest pause a 429 imposes (tests).
func (s *Shared) MaxPause() time.Duration { return s.pause.max }

// Transport is the transport every attempt goes through (tests).
func (s *Shared) Transport() http.RoundTripper { return s.transport }

// pause holds back every attempt of a Client until a time that a 429 with a
// Retry-After set: the service asked the client, not one call, to slow down.
type pause struct {
	until atomic.Int64 // unix nanoseconds; 0 when none was ever set
	max   time.Duration
}

// note extends the pause when resp is a 429 that says how long to wait
// (retry.ServerWait: Retry-After, RateLimit-Reset, RateLimit's t=), by that
// time, never more than the Client's longest retry wait.
func (p *pause) note(resp *http.Response, now time.Time) {
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		return
	}
	d, ok := retry.ServerWait(resp, now)
	if !ok || d <= 0 {
		return
	}
	until := now.Add(min(d, p.max)).UnixNano()
	for {
		cur := p.until.Load()
		if cur >= until || p.until.CompareAndSwap(cur, until) {
			return
		}
	}
}

// left is how long the pause still lasts now (read from now only when a
// pause was ever set).
func (p *pause) left(now func() time.Time) time.Duration {
	until := p.until.Load()
	if until == 0 {
		return 0
	}
	return time.Unix(0, until).Sub(now())
}

// beforeAttempt waits before an attempt of c (go-retryablehttp has waited
// the back-off of a retry already): the client-wide pause, then its turn
// under the rate limit. Every wait reads s.now and waits with s.sleep. It returns an
// error, and the attempt is not made, when the call's context ends first.
func (s *Shared) beforeAttempt(c *Call) error {
	ctx := c.ctx
	// The clock is read only once a 429 has set a pause.
	if d := s.pause.left(s.now); d > 0 {
		start := s.now()
		err := s.sleep(ctx, d)
		c.Waited += s.now().Sub(start)
		if err != nil {
			return err
		}
	}
	if s.Limiter == nil {
		return nil
	}
	now := s.now()
	r := s.Limiter.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(now) < d {
		r.CancelAt(now)
		return fmt.Errorf("payments: the rate limit's wait of %s would pass the context's deadline: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	err := s.sleep(ctx, d)
	c.Waited += s.now().Sub(now)
	if err != nil {
		r.CancelAt(s.now()) // give the turn back to the other calls
	}
	return err
}

// sleep waits for d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
