package payments

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// This file holds what a Client makes every attempt wait for, whichever call
// it belongs to: the client-side rate limit, and the pause that a 429 with a
// Retry-After imposes on the whole Client. Both are waits, not attempts: no
// attempt is counted and no middleware runs while a call waits, and the
// time shows as OperationResult.Waited and in the log line's "waited".

// WithRateLimit makes the Client send at most perSecond requests a second on
// average, in bursts of at most burst, over all its calls: each attempt,
// retries included, waits for its turn (a token bucket, from
// golang.org/x/time/rate). Off by default: the specification publishes no
// limit. A wait ends when the call's context does; a call whose deadline
// would pass before its turn fails at once, with a *TransportError matching
// context.DeadlineExceeded, and nothing sent. perSecond must be positive
// (math.Inf(1) for no limit) and burst at least 1.
func WithRateLimit(perSecond float64, burst int) Option {
	return optionFunc(func(c *clientConfig) error {
		if math.IsNaN(perSecond) || perSecond <= 0 || burst < 1 {
			return fmt.Errorf("%w: WithRateLimit(%v, %d) needs a positive rate and a burst of at least 1", ErrInvalidConfig, perSecond, burst)
		}
		lim := rate.Limit(perSecond)
		if math.IsInf(perSecond, 1) {
			lim = rate.Inf
		}
		c.limiter = rate.NewLimiter(lim, burst)
		return nil
	})
}

// pause holds back every attempt of a Client until a time that a 429 with a
// Retry-After set: the service asked the client, not one call, to slow down.
type pause struct {
	until atomic.Int64 // unix nanoseconds; 0 when none was ever set
	max   time.Duration
}

// note extends the pause when resp is a 429 with a Retry-After, by the time
// it asks for, never more than the Client's longest retry wait.
func (p *pause) note(resp *http.Response, now time.Time) {
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		return
	}
	d, ok := retry.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
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

// left is how long the pause still lasts at now.
func (p *pause) left(now time.Time) time.Duration {
	until := p.until.Load()
	if until == 0 {
		return 0
	}
	return time.Unix(0, until).Sub(now)
}

// beforeAttempt waits before an attempt of st: first the call's own back-off
// (retries only), then the client-wide pause, then its turn under the rate
// limit. Every wait reads the Client's clock (c.now) and waits with c.sleep,
// so that tests can compute the waits exactly on a fake clock. It returns an error, and the attempt is not made, when the context
// ends first.
func (c *Client) beforeAttempt(st *callState, backoff time.Duration) error {
	if backoff > 0 {
		if err := c.sleep(st, backoff); err != nil {
			return err
		}
	}
	if d := c.pause.left(c.now()); d > 0 {
		start := c.now()
		err := c.sleep(st, d)
		st.waited += c.now().Sub(start)
		if err != nil {
			return err
		}
	}
	if c.limiter == nil {
		return nil
	}
	now := c.now()
	r := c.limiter.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if deadline, ok := st.Deadline(); ok && deadline.Sub(now) < d {
		r.CancelAt(now)
		return fmt.Errorf("payments: the rate limit's wait of %s would pass the context's deadline: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	err := c.sleep(st, d)
	st.waited += c.now().Sub(now)
	if err != nil {
		r.CancelAt(c.now()) // give the turn back to the other calls
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
