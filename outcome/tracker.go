package outcome

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/testhook"
	"github.com/paymentsapi/payments-go/internal/textrule"
	"github.com/paymentsapi/payments-go/webhook"
)

// Tracker records how each payment and recipient ended, from the events the
// service sends, in a Store that every replica shares. Feed it with Wrap
// (around the webhook handler's function, so that it sees each event
// through the handler's once-only path); ask it with Get, Await and Stuck.
// It is safe for concurrent use.
type Tracker struct {
	store  Store
	memory *MemoryStore // store, when it is a MemoryStore: its waiters wait on its writes
	opts   options

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every write of this tracker (not on a MemoryStore)

	reconciler atomic.Pointer[reconcilerBox]
	listMu     sync.Mutex // held by the Await that lists events

	// The subscription of a Subscriber store runs while some Await waits.
	subMu     sync.Mutex
	waiting   int
	subCancel context.CancelFunc
	subLinger *time.Timer // ends the subscription subscribeLinger after the last waiter

	hooks awaitHooks // set by internal tests only
}

// awaitHooks let an internal test count the times a write wakes Await.
// Nil functions are not called; tests set them before the first Await.
type awaitHooks struct {
	waiting func() // Await is about to wait for a write, its poll timer or its context
	woken   func() // a change woke it (a write, or a call of the subscription; not the poll timer)
	// notifying is called by notify before it wakes the waiters, and may
	// hold it until one waits again, so that no wake-up merges with
	// another whatever the scheduling.
	notifying func()
}

// Option configures a Tracker.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	now         func() time.Time
	client      *payments.Client
	listAfter   time.Duration
	listWindow  time.Duration
	pollMin     time.Duration
	pollMax     time.Duration
	listEveryMx time.Duration
	reconcile   reconcileFunc
}

// Defaults of the options.
const (
	// DefaultListAfter is how long Await waits for an outcome to arrive
	// in the store before it asks the service's event list (WithEventList).
	DefaultListAfter = 10 * time.Second
	// DefaultListWindow is how far back Await's first listing goes.
	DefaultListWindow = 24 * time.Hour
	// DefaultPollInterval is the longest wait between two reads of the
	// store by Await (it starts at a hundredth of it and doubles): the
	// longest delay before a waiter sees an outcome that another process
	// recorded when the store's push (see Subscriber) is lost.
	DefaultPollInterval = 500 * time.Millisecond
)

// WithLogger makes the tracker log conflicts and events it cannot read
// (event ids, kinds and states only; never the event's data).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithEventList lets Await ask the service's event list (client's
// Webhooks.ListEvents) when no outcome arrived within after (0 keeps
// DefaultListAfter), so that an Await never depends on a delivery. The
// listed events go through the receiver's once-only path (the handler that
// Tracker.NewHandler made, or WithReconcile's function: the merchant's
// function included) or, without one, straight into the tracker (each event
// id counts once there too). The first listing covers DefaultListWindow before the Await
// began; the next ones, the events after the last one listed. Without this
// option Await only waits.
func WithEventList(client *payments.Client, after time.Duration) Option {
	return func(o *options) {
		o.client = client
		if after > 0 {
			o.listAfter = after
		}
	}
}

// WithReconcile makes Await run the events it lists (WithEventList) through
// reconcile, the once-only path of a receiver that is not a webhook.Handler
// made by Tracker.NewHandler: pgstore's Queue.Tracker passes its
// Queue.Reconcile. A nil reconcile changes nothing.
func WithReconcile(reconcile func(context.Context, iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error)) Option {
	return func(o *options) {
		if reconcile != nil {
			o.reconcile = reconcile
		}
	}
}

func init() {
	testhook.TrackerClock = func(now func() time.Time) any {
		return Option(func(o *options) {
			if now != nil {
				o.now = now
			}
		})
	}
	testhook.TrackerPollInterval = func(d time.Duration) any {
		return Option(func(o *options) {
			if d > 0 {
				o.pollMax = d
			}
		})
	}
}

// NewTracker returns a tracker on store (a new MemoryStore when nil).
func NewTracker(store Store, opts ...Option) *Tracker {
	t := &Tracker{store: store, changed: make(chan struct{})}
	t.opts = options{now: time.Now, listAfter: DefaultListAfter, listWindow: DefaultListWindow, pollMax: DefaultPollInterval}
	for _, o := range opts {
		o(&t.opts)
	}
	t.opts.pollMin = max(t.opts.pollMax/100, time.Millisecond)
	t.opts.listEveryMx = max(t.opts.listAfter, time.Second)
	if t.store == nil {
		t.store = NewMemoryStore()
	}
	t.memory, _ = t.store.(*MemoryStore)
	if t.opts.reconcile != nil {
		t.reconciler.Store(&reconcilerBox{t.opts.reconcile})
	}
	return t
}

// Store returns the tracker's store.
func (t *Tracker) Store() Store { return t.store }

// Apply records one event: it reads the subject's outcome, decides (see
// Decide) and writes only when the event changes the record, so a
// duplicate costs one read. It returns the outcome after the event and the
// event's effect. A kind the tracker does not follow returns EffectNone and
// touches nothing. A conflict is recorded and logged (WithLogger) with both
// event ids, and returned in Outcome.Conflict; it is not an error.
//
// An event it cannot record (ErrInvalidEvent from Decide: no id, a
// reference, status or flag it cannot read; or a store that cannot hold
// it) returns EffectUntrackable and a nil error, is logged at warning level
// (LogUntrackable) and writes nothing: it is never a reason to fail the
// delivery or the merchant's function. The error is the store's alone.
// Tests: TestApplyUntrackable, TestWrapUntrackableEventRunsTheFunction.
func (t *Tracker) Apply(ctx context.Context, ev *payments.Event) (Outcome, Effect, error) {
	sub, ok, err := SubjectOf(ev)
	if err != nil {
		LogUntrackable(ctx, t.opts.logger, ev, err)
		return Outcome{}, EffectUntrackable, nil
	}
	if !ok {
		return Outcome{}, EffectNone, nil
	}
	now := t.opts.now()
	var effect Effect
	o, err := t.store.Update(ctx, sub.ID, func(cur Outcome) (Outcome, bool, error) {
		next, e, err := Decide(cur, ev, now)
		effect = e
		return next, err == nil && e != EffectNone, err
	})
	if errors.Is(err, ErrInvalidEvent) {
		LogUntrackable(ctx, t.opts.logger, ev, err)
		return Outcome{}, EffectUntrackable, nil
	}
	if err != nil {
		err = fmt.Errorf("outcome: recording event %s: %w", ev.ID, err)
		t.logStoreFailed(ctx, ev, err)
		return Outcome{}, EffectNone, err
	}
	if effect != EffectNone {
		t.notify()
	}
	if effect == EffectConflict {
		LogConflict(ctx, t.opts.logger, o.Conflict, ev.ID)
	}
	return o, effect, nil
}

// LogConflict logs a conflict at warning level with both event ids, when
// the conflict was made by event eventID. Stores that apply events
// themselves (pgstore's Queue workers) use it.
func LogConflict(ctx context.Context, l *slog.Logger, c *ConflictError, eventID string) {
	if l == nil || c == nil || c.SecondEvent != eventID {
		return
	}
	m := func(s string) string { return redact.Text(s) } // the service sent them: credentials masked, ids whole
	l.LogAttrs(ctx, slog.LevelWarn, "outcome: conflicting final events; the first stands",
		slog.String("kind", string(c.Kind)), slog.String("id", m(c.ID)),
		slog.String("first_event", m(c.FirstEvent)), slog.String("first_state", string(c.FirstState)),
		slog.String("second_event", m(c.SecondEvent)), slog.String("second_state", string(c.SecondState)))
}

// LogUntrackable logs at warning level that event ev could not be
// recorded (EffectUntrackable), with the event's id and kind and err (which
// says why, never quoting the event's data). Stores that apply events
// themselves (pgstore's ApplyTx) use it.
func LogUntrackable(ctx context.Context, l *slog.Logger, ev *payments.Event, err error) {
	if l == nil || ev == nil {
		return
	}
	l.LogAttrs(ctx, slog.LevelWarn, "outcome: event cannot be tracked; the merchant's function runs and the event counts as processed",
		eventAttrs(ev, err)...)
}

func (t *Tracker) logStoreFailed(ctx context.Context, ev *payments.Event, err error) {
	if t.opts.logger == nil {
		return
	}
	t.opts.logger.LogAttrs(ctx, slog.LevelError, "outcome: event not recorded", eventAttrs(ev, err)...)
}

// eventAttrs are the attributes of a log line about event ev that err
// ended: its id and kind with anything shaped like a credential masked (the
// service sent them; an id's digits stay, to find the event by), and err
// with personal data masked too.
func eventAttrs(ev *payments.Event, err error) []slog.Attr {
	return []slog.Attr{slog.String("event_id", redact.Text(ev.ID)),
		slog.String("event_type", redact.Text(string(ev.Type))), slog.String("error", redact.String(fmt.Sprint(err), nil))}
}

// Wrap returns an EventFunc for webhook.NewHandler that records each event
// in the tracker, then calls fn (nil: nothing more). Recording first keeps
// fn once-only: a recording that fails returns its error before fn runs
// (a store that fails is marked webhook.ErrUnavailable, so the handler
// answers 503, releases the event and the service delivers it again), and
// recording an event twice is a no-op, so a redelivery after fn failed
// records nothing new. Since the handler runs the function once per event
// id (and Reconcile through the same store), a delivery and a listed copy
// of one event count once. Events of kinds the tracker does not follow go
// to fn untouched. An event the tracker cannot record (EffectUntrackable:
// see Apply) is logged at warning level and goes to fn all the same: the
// handler answers as fn does (200 when it succeeds), never 500 for the
// tracker's sake. Tests: TestWrapStoreDownMarksNothing,
// TestWrapFunctionFailsThenRedelivery, TestWrapUnknownKindsPassThrough,
// TestWrapUntrackableEventRunsTheFunction, TestWrapReferencesInAnyScript,
// TestAwaitThroughEventList (a delivery and a listed copy count once).
func (t *Tracker) Wrap(fn webhook.EventFunc) webhook.EventFunc {
	return func(ctx context.Context, ev *payments.Event) error {
		if _, _, err := t.Apply(ctx, ev); err != nil {
			// The store failed: a passing cause, answered 503.
			return fmt.Errorf("%w: %w", webhook.ErrUnavailable, err)
		}
		if fn == nil {
			return nil
		}
		return fn(ctx, ev)
	}
}

// Confirmed records that a payment was confirmed (pass the payment
// PaymentsService.Confirm returned), so that Stuck can tell a payment
// awaiting its outcome (ConfirmedAt set, its age counted from then) from
// a quote never confirmed (ConfirmedAt zero). It sets no final
// state, even when the payment says one: the final state comes from the
// payment's event. Calling it again keeps the first time. A payment
// without an id, or whose id or reference the tracker cannot record (see
// Subject), is refused with an error matching ErrInvalidEvent, and nothing
// is recorded.
func (t *Tracker) Confirmed(ctx context.Context, p *payments.Payment) error {
	if p == nil || p.ID == "" {
		return fmt.Errorf("%w: Confirmed needs a payment with an id", ErrInvalidEvent)
	}
	if !printable(p.ID) {
		return fmt.Errorf("%w: the payment's id is not 1 to %d printable characters", ErrInvalidEvent, maxIDLen)
	}
	if problem := textrule.Reference(p.Reference); problem != "" {
		return fmt.Errorf("%w: payment %s: its reference %s", ErrInvalidEvent, p.ID, problem)
	}
	now := t.opts.now()
	var wrote bool
	_, err := t.store.Update(ctx, p.ID, func(cur Outcome) (Outcome, bool, error) {
		if cur.ID != "" && cur.Kind != KindPayment {
			return cur, false, fmt.Errorf("%w: %s is a %s", ErrInvalidEvent, p.ID, cur.Kind)
		}
		next, changed := ConfirmedAt(cur, p, now)
		wrote = changed
		return next, changed, nil
	})
	if err != nil {
		return fmt.Errorf("outcome: recording the confirmation of payment %s: %w", p.ID, err)
	}
	if wrote {
		t.notify()
	}
	return nil
}

// Get returns the outcome of a payment or recipient id, or of a payment
// reference; the error matches ErrNotFound when the tracker has none.
func (t *Tracker) Get(ctx context.Context, idOrReference string) (Outcome, error) {
	return t.store.Load(ctx, idOrReference)
}

// Stuck returns what has no final outcome more than olderThan after it
// started, oldest first: the payments confirmed (Confirmed) more than
// olderThan ago; the payments never confirmed, known only from their
// events, first seen more than olderThan ago (their ConfirmedAt is zero:
// a quote never confirmed, or a payment whose Confirm was not recorded);
// and the recipients first seen more than olderThan ago, still
// unverified. A payment's age counts from ConfirmedAt when it is set,
// else from FirstSeen. Test: the Open case of each store's conformance
// test.
func (t *Tracker) Stuck(ctx context.Context, olderThan time.Duration) ([]Outcome, error) {
	before := t.opts.now().Add(-olderThan)
	out, err := t.store.Open(ctx, before, before)
	if err != nil {
		return nil, fmt.Errorf("outcome: listing stuck outcomes: %w", err)
	}
	since := func(o Outcome) time.Time {
		if o.Kind == KindPayment && !o.ConfirmedAt.IsZero() {
			return o.ConfirmedAt
		}
		return o.FirstSeen
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := since(out[i]), since(out[j]); !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// notify wakes the tracker's waiters after a write of the tracker, or a
// call of its subscription. On a MemoryStore it does nothing: the waiters
// wait on the store, which the write has woken already (see changes), and
// waking them here too would wake them twice per write.
func (t *Tracker) notify() {
	if t.memory != nil {
		return
	}
	if t.hooks.notifying != nil {
		t.hooks.notifying()
	}
	t.mu.Lock()
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
}

// changes returns a channel closed at the next change an Await waits for:
// on a MemoryStore, the store's next write (by any tracker sharing it);
// otherwise the next notify.
func (t *Tracker) changes() <-chan struct{} {
	if t.memory != nil {
		return t.memory.changes()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed
}
