package request

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// What a Client makes every attempt wait for, whichever call it belongs
// to: the client-side rate limit, and the pause that a 429 with a
// Retry-After imposes on the whole Client. Both are waits, not attempts: no
// attempt is counted and no middleware runs while a call waits, and the
// time shows as Call.Waited.

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

// beforeAttempt waits before an attempt of c: first the call's own back-off
// (retries only), then the client-wide pause, then its turn under the rate
// limit. Every wait reads the Pipeline's clock (p.now) and waits with
// p.sleep, so that tests can compute the waits exactly on a fake clock. It
// returns an error, and the attempt is not made, when the context ends
// first.
func (p *Pipeline) beforeAttempt(c *Call, backoff time.Duration) error {
	if backoff > 0 {
		if err := p.sleep(c, backoff); err != nil {
			return err
		}
	}
	if d := p.pause.left(p.now()); d > 0 {
		start := p.now()
		err := p.sleep(c, d)
		c.Waited += p.now().Sub(start)
		if err != nil {
			return err
		}
	}
	if p.limiter == nil {
		return nil
	}
	now := p.now()
	r := p.limiter.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if deadline, ok := c.Deadline(); ok && deadline.Sub(now) < d {
		r.CancelAt(now)
		return fmt.Errorf("payments: the rate limit's wait of %s would pass the context's deadline: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	err := p.sleep(c, d)
	c.Waited += p.now().Sub(now)
	if err != nil {
		r.CancelAt(p.now()) // give the turn back to the other calls
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
