package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paymentsapi/payments-go"
)

// The defaults follow one rule: a replica that dies while it holds a claim
// must not cost the event. Its claim lapses at most one lease after its last
// renewal, so the lease must be well under the time the sender keeps
// retrying. The sender the SDK models (paymentstest, the sandbox) retries
// after 1, 2, 4 and 8 seconds: 15 seconds in all. The real service's
// schedule is not published, and is assumed no shorter.
const (
	// DefaultLease is how long a claim lasts unless renewed, in
	// MemoryClaimStore and in the eventstore packages: a third of the sender's
	// 15 seconds of retries, so that the claim of a replica that died has
	// lapsed with two retries still to come (after 7 and 15 seconds). The
	// handler renews it every third of the lease while your function runs,
	// so a function may take longer than the lease: it is never started a
	// second time while its replica is alive and reaches the database.
	DefaultLease = 5 * time.Second
	// DefaultClaimStoreTimeout bounds each call the handler makes to its store
	// (a test hook sets another): a database that hangs costs a 503 within it.
	// It keeps ServeHTTP's answer (two store calls, the claim wait and your
	// function) under the 10 seconds the service waits; a store's own
	// WithTimeout (pgstore, redisstore) can make a call's deadline shorter.
	DefaultClaimStoreTimeout = 2 * time.Second
	// DefaultClaimWait is how long a delivery that finds its event claimed
	// by another waits for it to settle before it answers 409
	// (WithClaimWait).
	DefaultClaimWait = 2 * time.Second
)

// The lease margin: when renewals fail, the handler cancels the function's
// context this long before the claim's lease ends, so that a function that
// honours cancellation has stopped before the store may give the event to
// another delivery. A fifth of the lease, at least minLeaseMargin, and
// never more than half the lease, which wins below 2*minLeaseMargin so that
// the function keeps half its lease: 1 s for the default lease of 5 s,
// minLeaseMargin for a lease from 200 ms to 500 ms, half the lease below
// 200 ms. It covers the scheduling of the timer and of the function's
// goroutine on a loaded machine, and the drift between the replica's clock
// and the database's over one lease (the store starts the lease on the
// caller's clock before it sends the claim, so the database's lease ends
// later still).
const (
	leaseMarginDivisor = 5
	minLeaseMargin     = 100 * time.Millisecond
)

// leaseMargin is the margin of a lease.
func leaseMargin(lease time.Duration) time.Duration {
	return min(max(lease/leaseMarginDivisor, minLeaseMargin), lease/2)
}

// claim makes one Claim, bounded by the store timeout.
func (h *Handler) claim(ctx context.Context, id string) (Claim, error) {
	ctx, cancel := h.storeCtx(ctx)
	defer cancel()
	return h.store.Claim(ctx, id)
}

// claimOrWait claims id; when another delivery holds it, it waits up to
// wait (what is left of the claim wait) for that one to settle
// (awaitClaim). It returns the claim and the time the Claim that returned
// it was sent, from which its lease runs.
func (h *Handler) claimOrWait(ctx context.Context, id string, wait time.Duration) (Claim, time.Time, error) {
	claimed := h.clock.now()
	claim, err := h.claim(ctx, id)
	if err == nil && claim.Status == ClaimInProgress && wait > 0 {
		return h.awaitClaim(ctx, id, wait)
	}
	return claim, claimed, err
}

// Pauses between the claims of a delivery that waits for another one, and
// between the renewals of a claim after one failed.
const (
	firstWaitPause  = 1 * time.Millisecond
	maxWaitPause    = 250 * time.Millisecond
	renewRetryPause = 50 * time.Millisecond
)

// awaitClaim claims id again, with growing pauses, until the claim is
// acquired or done, wait is over, or the request ends. It returns
// ClaimInProgress when the wait is over, also when the last claim was cut by
// the end of the wait, and the time the returned claim was sent.
func (h *Handler) awaitClaim(ctx context.Context, id string, wait time.Duration) (Claim, time.Time, error) {
	if mem, ok := h.store.(*MemoryClaimStore); ok {
		return h.awaitMemoryClaim(ctx, mem, id, wait)
	}
	deadline := time.Now().Add(wait)
	inProgress := Claim{EventID: id, Status: ClaimInProgress}
	pause := firstWaitPause
	for {
		wait := min(pause, time.Until(deadline))
		if wait <= 0 {
			return inProgress, time.Time{}, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return inProgress, time.Time{}, nil
		case <-t.C:
		}
		pause = min(2*pause, maxWaitPause)
		start := time.Now()
		cctx, cancel := context.WithDeadline(ctx, earliest(start.Add(h.storeTimeout), deadline))
		c, err := h.store.Claim(cctx, id)
		cancel()
		switch {
		case err != nil && !time.Now().Before(deadline):
			return inProgress, time.Time{}, nil
		case err != nil:
			return Claim{}, time.Time{}, err
		case c.Status != ClaimInProgress:
			return c, start, nil
		}
	}
}

// awaitMemoryClaim is awaitClaim for a claim of this process's
// MemoryClaimStore: it is woken the moment the claim it waits for is
// completed, released or taken over (or at the end of that claim's lease,
// if it lapses), and claims again then, instead of after growing pauses,
// which answered a duplicate up to twice as late as the delivery it waited
// for. Its waits run on the handler's clock
// (TestMemoryWaitEndsWhenTheClaimSettles).
func (h *Handler) awaitMemoryClaim(ctx context.Context, mem *MemoryClaimStore, id string, wait time.Duration) (Claim, time.Time, error) {
	inProgress := Claim{EventID: id, Status: ClaimInProgress}
	over, stopOver := h.clock.timer(wait)
	defer stopOver()
	for {
		settled, lapse := mem.settled(id)
		lapsed, stopLapse := h.clock.timer(lapse)
		select {
		case <-ctx.Done():
			stopLapse()
			return inProgress, time.Time{}, nil
		case <-over:
			stopLapse()
			return inProgress, time.Time{}, nil
		case <-settled:
		case <-lapsed:
		}
		stopLapse()
		start := h.clock.now()
		c, err := mem.Claim(ctx, id)
		if err != nil || c.Status != ClaimInProgress {
			return c, start, err
		}
	}
}

// Why a function's context was cancelled by its heartbeat.
var (
	errLeaseRanOut = fmt.Errorf("webhook: the claim's lease is ending (within its safety margin) and no renewal succeeded: %w", context.DeadlineExceeded)
	errRenewLost   = fmt.Errorf("webhook: renewing the claim: %w", ErrClaimLost)
)

// heartbeat renews a claim while the function runs, and cancels the
// function's context when it can no longer vouch for the claim.
type heartbeat struct {
	h      *Handler
	ev     *payments.Event
	ctx    context.Context // the function's
	cancel context.CancelCauseFunc
	every  time.Duration // 0: the claim has no lease
	margin time.Duration // the function stops this long before the lease ends
	timer  func() bool   // stops the first renewal; nil: no lease
	// Made when the renewal loop starts (most functions end before):
	stopCh chan struct{} // closed by stop
	done   chan struct{} // closed when the loop has ended

	mu          sync.Mutex
	claim       Claim
	abortRenew  context.CancelFunc // cuts a renewal in flight
	stopped     bool
	cancelCause error
}

// startHeartbeat returns the heartbeat of claim, acquired by a Claim sent
// at claimed. The first renewal comes a third of the lease after the claim:
// a quick function costs none.
func (h *Handler) startHeartbeat(ctx context.Context, ev *payments.Event, claim Claim, claimed time.Time) *heartbeat {
	hb := &heartbeat{h: h, ev: ev, claim: claim}
	hb.ctx, hb.cancel = context.WithCancelCause(ctx)
	if claim.LeaseExpires.IsZero() {
		return hb
	}
	lease := claim.LeaseExpires.Sub(claimed)
	hb.every = max(lease/3, time.Millisecond)
	hb.margin = leaseMargin(lease)
	// Timed from when the Claim was sent, not from when it returned: a
	// slow Claim must not eat the renewal's margin.
	hb.timer = h.clock.afterFunc(max(claimed.Add(hb.every).Sub(h.clock.now()), 0), hb.loop)
	return hb
}

func (hb *heartbeat) current() Claim {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.claim
}

// stopAt is when the function must stop unless c is renewed: a margin
// before its lease ends.
func (hb *heartbeat) stopAt(c Claim) time.Time {
	return c.LeaseExpires.Add(-hb.margin)
}

// end cancels the function's context for cause and ends the loop.
func (hb *heartbeat) end(cause error) {
	hb.mu.Lock()
	hb.cancelCause = cause
	hb.mu.Unlock()
	hb.cancel(cause)
}

// cause is why the heartbeat cancelled the function's context, if it did.
func (hb *heartbeat) cause() error {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.cancelCause
}

// loop renews the claim every third of the lease, and soon again after a
// failure, until stopped, the claim is lost, or the lease comes within its
// margin of its end.
func (hb *heartbeat) loop() {
	hb.mu.Lock()
	if hb.stopped {
		hb.mu.Unlock()
		return
	}
	hb.stopCh, hb.done = make(chan struct{}), make(chan struct{})
	hb.mu.Unlock()
	defer close(hb.done)
	for {
		c := hb.current()
		if !hb.h.clock.now().Before(hb.stopAt(c)) {
			hb.h.log(hb.ctx, slog.LevelWarn, "claim's lease is ending and no renewal succeeded; cancelling the function", hb.ev,
				slog.String("margin", hb.margin.String()))
			hb.end(errLeaseRanOut)
			return
		}
		hb.mu.Lock()
		if hb.stopped {
			hb.mu.Unlock()
			return
		}
		ctx, cancel := hb.h.clock.withDeadline(context.Background(), earliest(hb.h.clock.now().Add(hb.h.storeTimeout), hb.stopAt(c)))
		hb.abortRenew = cancel
		hb.mu.Unlock()
		renewed, err := hb.h.store.Renew(ctx, c)
		cancel()
		extended := err == nil && renewed.LeaseExpires.After(c.LeaseExpires)
		hb.mu.Lock()
		if extended {
			hb.claim = renewed
		}
		stopped := hb.stopped // a renewal cut short by stop is no failure
		hb.mu.Unlock()
		next := hb.every
		switch {
		case stopped:
			return
		case err == nil && !extended:
			return // completed by the function itself (a transactional store)
		case err == nil:
		case errors.Is(err, ErrClaimLost):
			hb.h.log(hb.ctx, slog.LevelError, "claim lost to another delivery while processing; cancelling the function", hb.ev, slog.String("error", err.Error()))
			hb.end(errRenewLost)
			return
		default:
			hb.h.log(hb.ctx, slog.LevelWarn, "could not renew the claim; trying again", hb.ev, slog.String("error", err.Error()))
			next = min(hb.every/4, renewRetryPause)
		}
		tc, tstop := hb.h.clock.timer(min(next, hb.stopAt(hb.current()).Sub(hb.h.clock.now())))
		select {
		case <-hb.stopCh:
			tstop()
			return
		case <-tc:
		}
	}
}

// stop ends the renewals, waiting for one in flight (cut short), and
// returns the claim with its latest lease.
func (hb *heartbeat) stop() Claim {
	defer hb.cancel(nil)
	if hb.timer == nil {
		return hb.claim
	}
	if hb.timer() {
		return hb.claim // the loop never started
	}
	hb.mu.Lock()
	hb.stopped = true
	if hb.abortRenew != nil {
		hb.abortRenew()
	}
	stopCh, done := hb.stopCh, hb.done
	hb.mu.Unlock()
	if stopCh != nil { // else the loop, when it starts, sees stopped
		close(stopCh)
		<-done
	}
	return hb.current()
}

// earliest returns the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
