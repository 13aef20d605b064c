package outcome

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/webhook"
)

// Result is the final outcome Await waited for.
type Result struct {
	Kind Kind
	// ID is the payment's or recipient's id; Reference the payment's.
	ID        string
	Reference string
	// State is the final state.
	State State
	// EventID and EventType name the event that decided it; EventCreatedAt
	// is that event's created_at, and RecordedAt when a tracker recorded it.
	EventID        string
	EventType      payments.EventType
	EventCreatedAt time.Time
	RecordedAt     time.Time
	// IsCompleted and IsReversed are the payment's flags as last sent.
	IsCompleted bool
	IsReversed  bool
	// Outcome is the whole record, every step included.
	Outcome Outcome
}

// reconcileFunc runs listed events through a receiver's once-only path.
type reconcileFunc = func(context.Context, iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error)

type reconcilerBox struct{ r reconcileFunc }

// NewHandler returns webhook.NewHandler(verifier, t.Wrap(fn), opts...), the
// receiver that records each event in the tracker before fn sees it, and
// makes Await run the events it lists (WithEventList) through that
// handler's Reconcile: they reach fn too, once, whichever of a delivery or a
// listing brings them first. A reconcile given by WithReconcile, or the
// handler of an earlier NewHandler call, stays the one Await uses.
func (t *Tracker) NewHandler(verifier webhook.Verifier, fn webhook.EventFunc, opts ...webhook.HandlerOption) *webhook.Handler {
	h := webhook.NewHandler(verifier, t.Wrap(fn), opts...)
	t.reconciler.CompareAndSwap(nil, &reconcilerBox{h.Reconcile})
	return h
}

// Await waits for the final outcome of a payment (by id or reference) or of
// a recipient's verification (by id), recorded by any process that shares
// the tracker's store: it reads the store at once, then again when this
// tracker records an event or the store says another replica wrote one
// (a store that is a Subscriber: the subscription runs while some Await
// waits), and at least every DefaultPollInterval. With WithEventList, when no
// final outcome arrived within its time, it asks the service's event list itself and records what
// it finds (see NewHandler), then asks again, less and less often, so
// that the outcome comes even when no delivery does. An id the tracker has
// never seen is waited for in the same way, never answered with a state.
//
// It returns the final state with the event that decided it, or ctx's error
// (wrapped; errors.Is matches it) when ctx ends first. When two final events
// disagreed, it returns the result of the first together with a
// *ConflictError. A store that fails is read again until ctx ends; its last
// error is then part of the message. Tests: TestAwaitAnotherReplica,
// TestAwaitThroughEventList, TestAwaitUnknownWaitsForContext,
// TestAwaitConflict, TestAwaitStoreDown, and in a second process
// TestOutcomeAwaitInAnotherProcess (pgstore, redisstore).
func (t *Tracker) Await(ctx context.Context, idOrReference string) (Result, error) {
	if idOrReference == "" {
		return Result{}, fmt.Errorf("%w: Await needs an id or a reference", ErrInvalidEvent)
	}
	defer t.subscribe()()
	start := t.opts.now()
	nextList, listEvery := start.Add(t.opts.listAfter), t.opts.listEveryMx
	wait := t.opts.pollMin
	var lastErr error
	var l lister
	for {
		changed := t.changes()
		o, err := t.store.Load(ctx, idOrReference)
		switch {
		case err == nil && o.State.Final():
			return result(o)
		case err != nil && !errors.Is(err, ErrNotFound):
			lastErr = err
		}
		if ctx.Err() != nil {
			return Result{}, t.awaitErr(ctx, idOrReference, lastErr)
		}
		if now := t.opts.now(); t.opts.client != nil && !now.Before(nextList) {
			// One listing at a time per tracker: waiters that come at
			// once let one of them list for all.
			if t.listMu.TryLock() {
				if err := t.list(ctx, &l, start); err != nil {
					lastErr = err
				}
				t.listMu.Unlock()
			}
			nextList, listEvery = t.opts.now().Add(listEvery), min(2*listEvery, time.Hour)
			continue // read what the listing brought
		}
		if t.hooks.waiting != nil {
			t.hooks.waiting()
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return Result{}, t.awaitErr(ctx, idOrReference, lastErr)
		case <-changed:
			timer.Stop()
			if t.hooks.woken != nil {
				t.hooks.woken()
			}
		case <-timer.C:
			wait = min(2*wait, t.opts.pollMax)
		}
	}
}

func (t *Tracker) awaitErr(ctx context.Context, key string, lastErr error) error {
	const next = "it may still come: Await again later, or see it in Tracker.Stuck"
	if lastErr != nil {
		// One level, not the chain of the store's or the client's wrappers:
		// the last error is text here; the context's error stays matchable.
		return fmt.Errorf("outcome: no final outcome for %s before the context ended (%s; last error: %v): %w", key, next, lastErr, context.Cause(ctx))
	}
	return fmt.Errorf("outcome: no final outcome for %s before the context ended (%s): %w", key, next, context.Cause(ctx))
}

func result(o Outcome) (Result, error) {
	r := Result{Kind: o.Kind, ID: o.ID, Reference: o.Reference, State: o.State,
		IsCompleted: o.IsCompleted, IsReversed: o.IsReversed, Outcome: o}
	if s, ok := o.Decided(); ok {
		r.EventID, r.EventType, r.EventCreatedAt, r.RecordedAt = s.EventID, s.EventType, s.EventCreatedAt, s.RecordedAt
	}
	if o.Conflict != nil {
		return r, o.Conflict
	}
	return r, nil
}

// lister remembers where an Await's listings got to.
type lister struct{ after string }

// list asks the service for the tracked events after the last one listed
// (the first time, those of the list window before start), and runs them
// through the reconciler, or into the tracker.
func (t *Tracker) list(ctx context.Context, l *lister, start time.Time) error {
	params := &payments.EventListParams{Types: TrackedTypes(), After: l.after}
	if l.after == "" {
		params.Since = start.Add(-t.opts.listWindow)
	}
	var last string
	events := func(yield func(*payments.Event, error) bool) {
		for ev, err := range t.opts.client.Webhooks.ListEvents(ctx, params) {
			if err == nil {
				last = ev.ID
			}
			if !yield(ev, err) {
				return
			}
		}
	}
	var err error
	if box := t.reconciler.Load(); box != nil {
		var res webhook.ReconcileResult
		res, err = box.r(ctx, events)
		if err == nil && res.Failed > 0 {
			last = "" // list them again next time
			l.after = ""
		}
	} else {
		err = t.applyListed(ctx, events)
	}
	var apiErr *payments.APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Code == payments.CodeUnknownEventCursor:
		l.after = "" // the service forgot the cursor: list from the window again
	case last != "":
		l.after = last
	}
	if err != nil {
		t.log(ctx, slog.LevelWarn, "outcome: listing events for Await failed; it keeps waiting", slog.String("error", err.Error()))
		return fmt.Errorf("outcome: listing events: %w", err)
	}
	return nil
}

// applyListed records listed events in the tracker; an event it cannot
// record is logged and skipped by Apply (EffectUntrackable), so that one bad
// event does not hide the others.
func (t *Tracker) applyListed(ctx context.Context, events iter.Seq2[*payments.Event, error]) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		if _, _, err := t.Apply(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tracker) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if t.opts.logger != nil {
		for i := range attrs {
			attrs[i].Value = redact.Value(attrs[i].Value)
		}
		t.opts.logger.LogAttrs(ctx, level, msg, attrs...)
	}
}

const (
	// subscribeRetry is the pause before a failed subscription is made
	// again.
	subscribeRetry = time.Second
	// subscribeLinger is how long a subscription outlives its last
	// waiter, so that Awaits one after the other share it (on PostgreSQL
	// it holds a connection of its own).
	subscribeLinger = 30 * time.Second
)

// subscribe counts one more waiter and, for a Subscriber store, makes sure
// a subscription wakes the waiters on every write; the function it returns
// counts the waiter out, and ends the subscription with the last one. A
// MemoryStore needs none: its waiters wait on its writes (changes).
func (t *Tracker) subscribe() func() {
	sub, ok := t.store.(Subscriber)
	if !ok || t.memory != nil {
		return func() {}
	}
	t.subMu.Lock()
	defer t.subMu.Unlock()
	t.waiting++
	if t.subLinger != nil && t.subLinger.Stop() {
		t.subLinger = nil // the lingering subscription serves this waiter
	} else if t.waiting == 1 {
		t.subLinger = nil
		ctx, cancel := context.WithCancel(context.Background())
		t.subCancel = cancel
		go func() {
			for ctx.Err() == nil {
				err := sub.Subscribe(ctx, t.notify)
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					err = errors.New("the subscription ended")
				}
				t.log(ctx, slog.LevelWarn, "outcome: subscription to the store failed; waiters poll meanwhile", slog.String("error", err.Error()))
				select {
				case <-ctx.Done():
				case <-time.After(subscribeRetry):
				}
			}
		}()
	}
	return func() {
		t.subMu.Lock()
		defer t.subMu.Unlock()
		if t.waiting--; t.waiting == 0 {
			t.subLinger = time.AfterFunc(subscribeLinger, t.subCancel)
		}
	}
}
