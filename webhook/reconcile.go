package webhook

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/paymentsapi/payments-go"
)

// ErrShutdown is returned by Reconcile once Shutdown was called: at once by
// a Reconcile started after it, and before the next event by one that was
// running.
var ErrShutdown = errors.New("webhook: the handler is shutting down")

// Checkpoint is where a Reconcile got to: the last event of the listing up
// to which every event is done. Store it, and list from it next time
// (payments.EventListParams{After: c.ID}); no event before it is left
// undone.
type Checkpoint struct {
	// ID is the event's id; "" when the first event listed was not done.
	ID string
	// CreatedAt is the event's creation time, as listed.
	CreatedAt time.Time
}

// IsZero reports whether the checkpoint names no event: then keep the
// checkpoint you had.
func (c Checkpoint) IsZero() bool { return c.ID == "" }

// ReconcileResult is what a Reconcile did with the events it listed.
type ReconcileResult struct {
	// Processed counts the events this run recovered: it claimed them and
	// your function succeeded.
	Processed int
	// Enqueued counts the events a handler from NewQueueHandler handed to
	// its EnqueueFunc, which returned nil (the queue dedupes: an event it
	// already held counts too). Such a handler counts nothing else but
	// Failed.
	Enqueued int
	// AlreadyDone counts the events found processed already, by a
	// delivery, another replica or an earlier run.
	AlreadyDone int
	// InProgress counts the events another delivery (or another replica's
	// reconcile) still held at the end of the claim wait: not processed
	// here, and not failed; that one settles them.
	InProgress int
	// Failed counts the events whose function (EventFunc or
	// EnqueueFunc) returned an error or panicked. Each was released, or
	// not enqueued, so the next delivery or reconcile brings it again.
	Failed int
	// FailedIDs are the ids of the failed events, in the listing's order.
	FailedIDs []string
	// Checkpoint is the last event up to which every event listed is done
	// (processed, already done or enqueued): never past a failed,
	// in-progress or unreached event, so that a stored checkpoint skips
	// nothing.
	Checkpoint Checkpoint
}

// Reconcile runs the events listed from the service through the same
// function and the same ClaimStore as live deliveries, so that whichever path
// brings an event (a delivery, its retries, a reconcile, on any replica) it
// is processed once. A handler from NewQueueHandler calls its EnqueueFunc
// for each event instead, with what follows about claims left out: the
// queue dedupes. Pass the service's listing:
//
//	events := client.Webhooks.ListEvents(ctx, &payments.EventListParams{Since: time.Now().Add(-24 * time.Hour)})
//	res, err := h.Reconcile(ctx, events)
//
// or, with a stored checkpoint, &payments.EventListParams{After: id}.
//
// The events are taken one at a time, in the listing's order. Each is
// claimed in the store as a delivery would claim it (with the store
// timeout): an event already processed is skipped; one that another
// delivery holds is waited for as a delivery waits (WithClaimWait), then
// skipped as done, processed here if the other released it, or counted as
// in progress; a free one is processed once, with everything a delivery
// gets: the lease renewed while the function runs, a panic recovered,
// Complete (retried in the background when the store fails, which Shutdown
// waits for) or Release after a failure. A delivery that arrives while
// Reconcile holds its event's claim is treated as any duplicate: it waits,
// then gets 200 or 409. Triggered test events are passed to the function
// like live ones: it decides (webhook.Triggered).
//
// The dedupe key is the event's id. With Standard Webhooks the handler
// dedupes deliveries on the webhook-id header instead: Reconcile assumes
// that the service sends webhook-id equal to the event's id, as paymentstest
// and the sandbox do; a sender that does not would have its events
// processed once by deliveries and once more by Reconcile.
//
// A function that fails does not stop the run: the events after it are
// still processed (so one bad event does not hold back the others), and the
// result counts it in Failed and FailedIDs; the Checkpoint stays before it.
// The error is nil when the listing was walked to its end, even if some
// functions failed. An event whose claim the store refuses or does not
// answer (an id it cannot store, say) does not stop the run either: it is
// logged with its id ("reconcile: could not claim the event; skipped"),
// the Checkpoint stays before it, the run goes on, and the error returned
// at the end names every such event and wraps each store error (errors.Is
// finds them). After maxReconcileClaimFailures (3) such failures in a row
// the store is taken to be down and the run stops there, with the same
// error. Reconcile stops early, returning the result so far with an
// error, when the listing fails (the error wraps the listing's, whatever
// it is: a 404 matches payments.ErrListEventsUnavailable, a cursor cycle
// the client's error for it), when ctx ends (a function interrupted by it
// is released and not counted; the error matches ctx's), and when Shutdown
// is called (ErrShutdown). Shutdown waits for the function running, as for
// a delivery in flight.
//
// It is safe to run on every replica at once, and beside live deliveries:
// the store makes sure one of them processes each event. The store must
// remember processed ids for longer than the time the listing covers: an
// event processed before the store forgot it is processed again (a
// MemoryClaimStore forgets when the process stops). Reconcile logs (WithLogger)
// "event recovered by reconcile" for each event it processed, each failure,
// and one line "reconcile finished" with the counts; it is not reported to
// a DeliveryObserver.
func (h *Handler) Reconcile(ctx context.Context, events iter.Seq2[*payments.Event, error]) (ReconcileResult, error) {
	var res ReconcileResult
	if h.bg.closing.Load() {
		return res, fmt.Errorf("webhook: reconcile: %w", ErrShutdown)
	}
	start := time.Now()
	err := h.reconcile(ctx, events, &res)
	attrs := []slog.Attr{
		slog.Int("recovered", res.Processed), slog.Int("already_done", res.AlreadyDone),
		slog.Int("in_progress", res.InProgress), slog.Int("failed", res.Failed),
		slog.String("checkpoint", res.Checkpoint.ID), slog.String("duration", time.Since(start).String()),
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	if err != nil || res.Failed > 0 {
		level = slog.LevelWarn
	}
	h.log(ctx, level, "reconcile finished", nil, attrs...)
	return res, err
}

// maxReconcileClaimFailures is how many events in a row whose claims the
// store fails make Reconcile stop: the store is down, not one id bad.
const maxReconcileClaimFailures = 3

// claimFailure is an event whose claim the store failed: the run goes on
// past it.
type claimFailure struct {
	id  string
	err error
}

func (f *claimFailure) Error() string {
	return fmt.Sprintf("webhook: reconcile: claiming event %s: %v", f.id, f.err)
}

func (f *claimFailure) Unwrap() error { return f.err }

// reconcile walks the listing into res, and says why it stopped early or
// which events it could not claim.
func (h *Handler) reconcile(ctx context.Context, events iter.Seq2[*payments.Event, error], res *ReconcileResult) error {
	var skipped []*claimFailure
	contiguous := true // every event so far is done
	inARow := 0        // claims the store failed, in a row
	for ev, err := range events {
		if err != nil {
			return withSkipped(fmt.Errorf("webhook: reconcile: listing events: %w", err), skipped)
		}
		if ev == nil || ev.ID == "" {
			return withSkipped(errors.New("webhook: reconcile: the listing gave an event without an id"), skipped)
		}
		if err := ctx.Err(); err != nil {
			return withSkipped(fmt.Errorf("webhook: reconcile stopped before event %s: %w", ev.ID, context.Cause(ctx)), skipped)
		}
		outcome, err := h.reconcileEvent(ctx, ev)
		var cf *claimFailure
		switch {
		case errors.As(err, &cf):
			h.log(ctx, slog.LevelError, "reconcile: could not claim the event; skipped, the checkpoint stays before it", ev,
				slog.String("error", cf.err.Error()))
			skipped = append(skipped, cf)
			contiguous = false
			if inARow++; inARow >= maxReconcileClaimFailures {
				return withSkipped(fmt.Errorf("webhook: reconcile stopped at event %s: the store failed %d claims in a row", ev.ID, inARow), skipped)
			}
			continue
		case err != nil:
			return withSkipped(err, skipped)
		}
		inARow = 0
		switch outcome {
		case OutcomeProcessed:
			res.Processed++
		case OutcomeDuplicate:
			res.AlreadyDone++
		case OutcomeEnqueued:
			res.Enqueued++
		case OutcomeInProgress:
			res.InProgress++
		case OutcomeFailed:
			res.Failed++
			res.FailedIDs = append(res.FailedIDs, ev.ID)
		}
		contiguous = contiguous && (outcome == OutcomeProcessed || outcome == OutcomeDuplicate || outcome == OutcomeEnqueued)
		if contiguous {
			res.Checkpoint = Checkpoint{ID: ev.ID, CreatedAt: ev.CreatedAt}
		}
	}
	return withSkipped(nil, skipped)
}

// withSkipped adds to err (nil when the run went to the end) the events
// whose claims the store failed: their ids, and each store error.
func withSkipped(err error, skipped []*claimFailure) error {
	if len(skipped) == 0 {
		return err
	}
	ids := make([]string, len(skipped))
	errs := []error{nil, err}
	for i, cf := range skipped {
		ids[i] = cf.id
		errs = append(errs, cf)
	}
	errs[0] = fmt.Errorf("webhook: reconcile: the store failed the claims of %d events, left for the next run: %s", len(ids), strings.Join(ids, ", "))
	return errors.Join(errs...)
}

// reconcileEvent claims one listed event, waiting like a delivery for a
// claim another holds, and processes it when it is free. It counts as a
// delivery in flight, for Shutdown. An error stops the run, except a
// *claimFailure.
func (h *Handler) reconcileEvent(ctx context.Context, ev *payments.Event) (DeliveryOutcome, error) {
	if !h.bg.enter() {
		return "", fmt.Errorf("webhook: reconcile stopped before event %s: %w", ev.ID, ErrShutdown)
	}
	defer h.bg.leave()
	if h.enqueue != nil {
		return h.enqueueListed(ctx, ev)
	}
	claim, claimed, err := h.claimOrWait(ctx, ev.ID, h.claimWait)
	switch {
	case ctx.Err() != nil && (err != nil || claim.Status == ClaimInProgress):
		// The claim or its wait was cut short by ctx.
		return "", fmt.Errorf("webhook: reconcile stopped at event %s: %w", ev.ID, context.Cause(ctx))
	case err != nil:
		return "", &claimFailure{id: ev.ID, err: err}
	case claim.Status == ClaimDone:
		return OutcomeDuplicate, nil
	case claim.Status == ClaimInProgress:
		h.log(ctx, slog.LevelDebug, "reconcile: event is being processed by another delivery; left to it", ev)
		return OutcomeInProgress, nil
	case claim.Status != ClaimAcquired:
		return "", fmt.Errorf("webhook: reconcile: the store gave the unknown claim status %v for event %s", claim.Status, ev.ID)
	}
	attrs, err := h.runClaimed(ctx, ev, claim, claimed)
	var nr *notRecordedError
	switch {
	case errors.As(err, &nr):
		h.log(ctx, slog.LevelError, "reconcile: event processed but not recorded as done; it will be processed again once its claim lapses", ev,
			append(attrs, slog.String("error", err.Error()))...)
		return OutcomeStoreUnavailable, nil
	case err != nil && ctx.Err() != nil:
		h.log(ctx, slog.LevelWarn, "reconcile: event processing interrupted; released for the next delivery", ev,
			append(attrs, slog.String("error", err.Error()))...)
		return "", fmt.Errorf("webhook: reconcile stopped at event %s: %w", ev.ID, context.Cause(ctx))
	case err != nil:
		h.log(ctx, slog.LevelError, "reconcile: event processing failed; released for the next delivery", ev,
			append(attrs, slog.String("error", err.Error()))...)
		return OutcomeFailed, nil
	}
	h.log(ctx, slog.LevelInfo, "event recovered by reconcile", ev, attrs...)
	return OutcomeProcessed, nil
}

// enqueueListed hands one listed event to a NewQueueHandler handler's
// EnqueueFunc.
func (h *Handler) enqueueListed(ctx context.Context, ev *payments.Event) (DeliveryOutcome, error) {
	attrs, err := h.handOff(ctx, ev)
	switch {
	case err != nil && ctx.Err() != nil:
		return "", fmt.Errorf("webhook: reconcile stopped at event %s: %w", ev.ID, context.Cause(ctx))
	case err != nil:
		h.log(ctx, slog.LevelError, "reconcile: the event could not be enqueued; left for the next delivery or reconcile", ev,
			append(attrs, slog.String("error", err.Error()))...)
		return OutcomeFailed, nil
	}
	h.log(ctx, slog.LevelInfo, "event enqueued by reconcile", ev)
	return OutcomeEnqueued, nil
}
