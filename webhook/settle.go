package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paymentsapi/payments-go"
)

// maxPendingCompletions is how many completions a handler retries in the
// background at most (a goroutine each). Past it, a delivery whose
// completion fails is answered 503 (see Handler).
const maxPendingCompletions = 1000

// background tracks the deliveries in flight and the completions retried
// after them, for Shutdown. Its life: open; closing once Shutdown is
// called (new deliveries and Reconcile refused, background completions
// still start and are waited for); stopped once Shutdown returns (no
// background completion starts any more).
type background struct {
	closing  atomic.Bool
	inflight atomic.Int64 // deliveries past their parsing
	pending  atomic.Int64 // completions retried in the background
	limit    int64        // most pending at once (maxPendingCompletions; tests lower it)
	stopOnce sync.Once
	stopMu   sync.Mutex
	stopped  bool          // Shutdown returned: start no background completion
	stop     chan struct{} // closed when Shutdown gives up waiting
}

// startCompletion counts a background completion in, unless the queue is
// full or Shutdown has returned; the caller starts it only then.
func (b *background) startCompletion() (bool, string) {
	b.stopMu.Lock()
	defer b.stopMu.Unlock()
	limit := b.limit
	if limit == 0 {
		limit = maxPendingCompletions
	}
	switch {
	case b.stopped:
		return false, "the handler has shut down"
	case b.pending.Load() >= limit:
		return false, fmt.Sprintf("%d completions are already being retried in the background", limit)
	}
	b.pending.Add(1)
	return true, ""
}

// markStopped makes every later startCompletion refuse.
func (b *background) markStopped() {
	b.stopMu.Lock()
	b.stopped = true
	b.stopMu.Unlock()
}

// stopping is closed when Shutdown stops waiting for pending completions.
func (b *background) stopping() chan struct{} {
	b.stopMu.Lock()
	defer b.stopMu.Unlock()
	if b.stop == nil {
		b.stop = make(chan struct{})
	}
	return b.stop
}

// shutdownPoll is how often Shutdown looks whether the work is done.
const shutdownPoll = 10 * time.Millisecond

// shutdownGrace is how long Shutdown, once its context has ended, waits for
// the background completions to notice and log the events they leave.
const shutdownGrace = 100 * time.Millisecond

// Shutdown makes the handler refuse new deliveries (503, so that the
// service delivers them again, to another replica), and waits for the
// deliveries in flight and for the completions still being retried in the
// background (events processed that the store could not yet record as
// done), until they are all done or ctx ends. Then it stops retrying,
// logs each event left unrecorded (a redelivery may process it again), and
// returns an error matching ctx's; it does not wait for functions still
// running. Once it has returned, no background work starts: a delivery
// still running whose completion fails is answered 503, as past the cap of
// background completions (see Handler), instead of handing the completion
// to a retry nobody waits for. Calling it again waits again for what is
// left. A handler from NewQueueHandler has no background work: Shutdown
// waits for the EnqueueFunc calls running. Call it after
// http.Server.Shutdown, with the time your platform
// leaves between SIGTERM and SIGKILL. Tests:
// TestHandlerShutdownWaitsForPendingCompletions,
// TestHandlerShutdownGivesUpAtItsDeadline,
// TestHandlerNoBackgroundCompletionAfterShutdown.
func (h *Handler) Shutdown(ctx context.Context) error {
	stop := h.bg.stopping()
	h.bg.closing.Store(true)
	defer h.bg.markStopped()
	t := time.NewTicker(shutdownPoll)
	defer t.Stop()
	// A delivery counts its completion as pending before it leaves: read
	// the deliveries first.
	for h.bg.inflight.Load() != 0 || h.bg.pending.Load() != 0 {
		select {
		case <-ctx.Done():
			h.bg.markStopped()
			left := h.bg.pending.Load()
			h.bg.stopOnce.Do(func() { close(stop) })
			// Closing stop cancels the store call each retry loop may be
			// in: give them a moment to log their event and end, never
			// more (a store that ignores its context is left behind).
			for end := time.Now().Add(shutdownGrace); h.bg.pending.Load() != 0 && time.Now().Before(end); {
				<-t.C
			}
			return fmt.Errorf("webhook: shutdown with %d processed events not recorded as done: %w", left, context.Cause(ctx))
		case <-t.C:
		}
	}
	return nil
}

// notRecordedError is runClaimed's error when the function succeeded but
// the store could not record the event as done and no background retry
// could take the completion (the queue full, or the handler shut down).
type notRecordedError struct {
	eventID string
	why     string
	err     error
}

func (e *notRecordedError) Error() string {
	return fmt.Sprintf("webhook: event %s was processed but could not be recorded as done (%v), and no background retry could take it: %s; "+
		"it will be delivered and processed again once its claim's lease lapses, so make the function idempotent, and bring the claim store back",
		e.eventID, e.err, e.why)
}

func (e *notRecordedError) Unwrap() error { return e.err }

// runClaimed runs fn for a claimed event, renewing the claim meanwhile, and
// settles the claim: Complete after success (retried in the background when
// the store fails), Release after an error or a panic, so that the next
// delivery processes the event. It returns fn's error (a panic as an error),
// or a *notRecordedError when fn succeeded but its completion could be
// neither recorded nor retried, and the attributes to log with the outcome:
// the duration, and on failure the panic's stack and why the heartbeat
// cancelled the function. ServeHTTP and Reconcile both run events through
// it.
func (h *Handler) runClaimed(ctx context.Context, ev *payments.Event, claim Claim, claimed time.Time) ([]slog.Attr, error) {
	// The claim must be settled even when the service has hung up.
	settleCtx := context.WithoutCancel(ctx)
	start := time.Now()
	hb := h.startHeartbeat(ctx, ev, claim, claimed)
	err := h.run(hb.ctx, ev, claim)
	claim = hb.stop()
	if err != nil {
		h.release(settleCtx, ev, claim)
		if h.logger == nil {
			return nil, err
		}
		attrs := []slog.Attr{slog.String("duration", time.Since(start).String())}
		var p *panicError
		if errors.As(err, &p) {
			attrs = append(attrs, slog.String("stack", string(p.stack)))
		}
		if cause := hb.cause(); cause != nil {
			attrs = append(attrs, slog.String("cancelled_by", cause.Error()))
		}
		return attrs, err
	}
	var attrs []slog.Attr // for the log line alone
	if h.logger != nil {
		attrs = []slog.Attr{slog.String("duration", time.Since(start).String())}
	}
	return attrs, h.complete(settleCtx, ev, claim, hb.every)
}

// storeCtx bounds one store call. A MemoryClaimStore never waits on anything,
// so its calls need no timer.
func (h *Handler) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if h.inMemory {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, h.storeTimeout)
}

func (h *Handler) release(ctx context.Context, ev *payments.Event, claim Claim) {
	ctx, cancel := h.storeCtx(ctx)
	defer cancel()
	if err := h.store.Release(ctx, claim); err != nil {
		h.log(ctx, slog.LevelError, "could not release the claim on a failed event; redeliveries may be refused until its lease lapses", ev, slog.String("error", err.Error()))
	}
}

// complete records a processed event as done. When the store fails, it
// hands the claim to a goroutine that keeps trying; every renews the claim
// meanwhile (0: the claim has no lease). When no goroutine may start (the
// background queue is full, or Shutdown returned), it leaves the claim to
// lapse and returns a *notRecordedError.
func (h *Handler) complete(ctx context.Context, ev *payments.Event, claim Claim, every time.Duration) error {
	cctx, cancel := h.storeCtx(ctx)
	err := h.store.Complete(cctx, claim)
	cancel()
	if err == nil {
		return nil
	}
	ok, why := h.bg.startCompletion() // before the delivery leaves: Shutdown sees one or the other
	if !ok {
		return &notRecordedError{eventID: claim.EventID, why: why, err: err}
	}
	if errors.Is(err, ErrClaimLost) {
		h.log(ctx, slog.LevelError, "event processed but its claim was lost to another delivery, which may process it again", ev, slog.String("error", err.Error()))
	} else {
		h.log(ctx, slog.LevelWarn, "event processed but not recorded as done yet; retrying in the background", ev, slog.String("error", err.Error()))
	}
	go h.completeLater(context.WithoutCancel(ctx), ev, claim, every, errors.Is(err, ErrClaimLost))
	return nil
}

// Pauses between the background attempts to record a processed event:
// short, so that the completion lands soon after the store is back, before
// a redelivery can find a lapsed claim to take.
const (
	firstCompletePause = 50 * time.Millisecond
	maxCompletePause   = 250 * time.Millisecond
)

// completeLater retries Complete until it lands, renewing the claim while
// it waits. When the claim was lost, it claims the event again: done means
// another delivery recorded it; acquired (the other claim lapsed or was
// released) lets this one record it; in progress means waiting for the
// other to settle.
func (h *Handler) completeLater(ctx context.Context, ev *payments.Event, claim Claim, every time.Duration, lost bool) {
	defer h.bg.pending.Add(-1)
	stop := h.bg.stopping()
	// Shutdown's stop cuts the store call in flight too, not only the wait
	// between attempts.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	pause := firstCompletePause
	renewed := claim.LeaseExpires.Add(-3 * every) // when the lease was last extended
	for tries := 1; ; tries++ {
		t := time.NewTimer(pause)
		select {
		case <-stop:
			t.Stop()
			h.log(ctx, slog.LevelError, "event processed but not recorded as done when the handler shut down; a redelivery may process it again", ev, slog.Int("tries", tries))
			return
		case <-t.C:
		}
		pause = min(2*pause, maxCompletePause)
		if lost {
			c, err := h.claim(ctx, claim.EventID)
			switch {
			case err != nil || c.Status == ClaimInProgress:
				continue
			case c.Status == ClaimDone:
				h.log(ctx, slog.LevelInfo, "processed event found recorded as done by another delivery", ev, slog.Int("tries", tries))
				return
			}
			claim, lost, renewed = c, false, time.Now()
		}
		if every > 0 && time.Since(renewed) >= every {
			cctx, cancel := h.storeCtx(ctx)
			c, err := h.store.Renew(cctx, claim)
			cancel()
			switch {
			case err == nil:
				claim, renewed = c, time.Now()
			case errors.Is(err, ErrClaimLost):
				lost = true
				continue
			}
		}
		cctx, cancel := h.storeCtx(ctx)
		err := h.store.Complete(cctx, claim)
		cancel()
		switch {
		case err == nil:
			h.log(ctx, slog.LevelInfo, "processed event recorded as done after a retry", ev, slog.Int("tries", tries+1))
			return
		case errors.Is(err, ErrClaimLost):
			lost = true
		}
	}
}
