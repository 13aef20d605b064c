package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/surprise"
)

// DefaultMaxBodyBytes is the largest webhook body a handler made by
// NewHandler reads unless WithMaxBodyBytes says otherwise.
const DefaultMaxBodyBytes = 1 << 20

// EventFunc is the merchant's processing of one verified event. Return nil
// only when the event has been fully handled (for example, the order is
// marked paid in your database): the handler then answers 200 and the event
// is never processed again. Return an error to make the handler answer 500,
// so that the service delivers the event again later.
//
// ctx is the request's context: it is cancelled if the service drops the
// connection, and when the handler can no longer vouch for the claim: a
// renewal found it lost to another delivery (context.Cause(ctx) matches
// ErrClaimLost), or no renewal succeeded and the lease is within its
// safety margin of its end (the cause matches context.DeadlineExceeded).
// The margin is a fifth of the lease (1 s of the default 5 s), at least
// 100 ms, and never more than half the lease (a lease under 200 ms has a
// margin of half of it): a function that stops within it when its
// context is cancelled has stopped before the store can give the event to
// another delivery. Stop when it is cancelled: another replica may process
// the event next. It carries the claim
// (ClaimFromContext). A panic is recovered and treated as an error, logged
// with its stack. The error is logged by the handler (see WithLogger), so
// keep secrets and personal data out of it.
type EventFunc func(ctx context.Context, ev *payments.Event) error

// HandlerOption configures a handler made by NewHandler or
// NewQueueHandler.
type HandlerOption func(*Handler)

// WithMaxBodyBytes sets the largest body the handler reads (default
// DefaultMaxBodyBytes). A larger body is answered 413 without being
// verified or parsed. n <= 0 keeps the default.
func WithMaxBodyBytes(n int64) HandlerOption {
	return func(h *Handler) {
		if n > 0 {
			h.maxBody = n
		}
	}
}

// WithClaimStore sets the store that makes sure an event is processed once
// (default: a MemoryClaimStore of DefaultMemoryClaimStoreSize entries,
// private to this handler and to this process). Give a store shared by
// every replica of your receiver when you run more than one. nil keeps the
// default. NewQueueHandler refuses it: a queue dedupes by itself.
func WithClaimStore(s ClaimStore) HandlerOption {
	return func(h *Handler) {
		if s != nil {
			h.store = s
		}
	}
}

// WithClaimWait sets how long a delivery that finds its event claimed by
// another delivery waits for that one to settle before it answers 409
// (default DefaultClaimWait): it answers 200 as soon as the other completes,
// and processes the event itself if the other released it or its lease
// lapsed. It asks the store again after 1 ms, then after pauses that double
// up to 250 ms, so that a short function's duplicate is answered soon after
// it settles. Keep it well under what the service waits for an answer. 0
// answers 409 at once; d < 0 keeps the default. NewQueueHandler refuses
// it: it claims nothing.
func WithClaimWait(d time.Duration) HandlerOption {
	return func(h *Handler) {
		if d >= 0 {
			h.claimWait = d
		}
	}
}

// WithLogger makes the handler log each delivery it answers: the event
// id and kind when known, the status, the reason for a refusal, and the error
// of your EventFunc; and, once per handler, each surprise a delivery holds
// (payments.Surprise: an unknown event kind, body member, payment status or
// signature header), with its kind and detail. Bodies, the signature header
// and secrets are never logged. Without it nothing is logged.
func WithLogger(l *slog.Logger) HandlerOption {
	return func(h *Handler) { h.logger = l }
}

// Handler is an http.Handler that receives webhook deliveries: it
// verifies each one and parses it, then either hands it off to your queue
// (NewQueueHandler: nothing more, see there) or drops duplicates and runs
// your EventFunc during the delivery (NewHandler, for a receiver without a
// queue: what follows). It is safe for concurrent use.
//
// NewHandler's answers, in the order the checks are made:
//
//   - 405, with "Allow: POST", to any method other than POST;
//   - 413 to a body larger than the limit (read before anything parses it);
//   - 401 when the Verifier refuses the delivery (missing, malformed or
//     wrong signature, timestamp out of tolerance);
//   - 400 when the verified body is not an event;
//   - 200 when the event id was already processed successfully, without
//     calling your function again (an event this handler processed or saw
//     done recently is answered from memory, without asking the store:
//     DefaultRecentlyDone);
//   - 409 when the same event id is being processed by another delivery
//     that did not settle within WithClaimWait: the service's retry will
//     get 200 once that one succeeds, or process the event if it failed
//     (or its replica died: its lease then lapses within the lease);
//   - 503 when the ClaimStore fails or does not answer within DefaultClaimStoreTimeout,
//     without calling your function: an event is better delivered again
//     later than processed twice. It comes within the store timeout, or,
//     when the delivery first waited for another's claim, within the store
//     timeout plus the claim wait (4 s with the defaults). 503 also once
//     Shutdown was called;
//   - 200 when your function returned nil, and 500 when it returned an error
//     (or panicked), so the service retries. A failed event is released and
//     processed again on the next delivery.
//
// While your function runs, the handler renews the claim's lease every
// third of the lease, starting only a third of the lease after the claim,
// so a quick function costs no renewal. When your function succeeded but the
// store cannot record it (Complete fails or hangs), the handler answers 200
// at once and keeps trying in the background, renewing the claim meanwhile,
// until the completion lands or Shutdown gives up: a redelivery meanwhile
// finds the claim taken, never a free event to process again. At most 1,000
// completions are retried so at once. Past that, and once Shutdown has
// returned, the handler cannot keep its word that the event is done, so it
// answers 503 (OutcomeStoreUnavailable) and logs the event: your function's
// effect stays (it ran and succeeded), the event is not recorded as done,
// and its claim, no longer renewed, lapses with its lease; the service's
// next delivery (or Reconcile) then runs your function again. Make your
// function idempotent for that case, as for any at-least-once delivery.
// Tests: TestHandlerBackgroundCompletionsAreCapped,
// TestHandlerNoBackgroundCompletionAfterShutdown.
//
// ServeHTTP returns, whatever the database does, within: one store timeout
// for the claim, the claim wait, your function's run, and one store timeout
// for the completion or release (with the defaults, 6 seconds plus your
// function). Keep your function quick (the service expects a prompt
// answer); hand long work to a queue of your own.
type Handler struct {
	verifier     Verifier
	fn           EventFunc   // NewHandler's
	enqueue      EnqueueFunc // NewQueueHandler's (serve.go)
	store        ClaimStore
	maxBody      int64
	logger       *slog.Logger
	observer     DeliveryObserver
	storeTimeout time.Duration
	claimWait    time.Duration
	inMemory     bool // the store is a *MemoryClaimStore itself (not a wrapper)
	recentSize   int
	recent       *recentlyDone // nil: remembers nothing
	bg           background
	surprised    surprise.Set // the surprises already logged (surprise.go)
	// How many of them are signature headers (surprise.go).
	headerSurprises atomic.Int64
	clock           clock // realClock{}; tests set another (export_test.go)
}

// NewHandler returns a handler that verifies deliveries with verifier
// (usually a *SignatureVerifier), and calls fn once per event id. It panics
// if verifier or fn is nil, as a programming error.
//
//	v, err := webhook.NewSignatureVerifier([]string{secret})
//	...
//	mux.Handle("POST /webhooks", webhook.NewHandler(v, processEvent))
func NewHandler(verifier Verifier, fn EventFunc, opts ...HandlerOption) *Handler {
	if verifier == nil {
		panic("webhook: NewHandler with a nil Verifier")
	}
	if fn == nil {
		panic("webhook: NewHandler with a nil EventFunc")
	}
	h := &Handler{clock: realClock{}, verifier: verifier, fn: fn, maxBody: DefaultMaxBodyBytes,
		storeTimeout: DefaultClaimStoreTimeout, claimWait: DefaultClaimWait, recentSize: DefaultRecentlyDone}
	for _, o := range opts {
		o(h)
	}
	if h.store == nil {
		h.store = NewMemoryClaimStore(DefaultMemoryClaimStoreSize)
	}
	var mem *MemoryClaimStore
	mem, h.inMemory = h.store.(*MemoryClaimStore)
	if h.inMemory {
		mem.logTo(h.logger)
		if v, ok := verifier.(interface{ replayTolerance() time.Duration }); ok {
			mem.coverReplays(2 * v.replayTolerance())
		}
	} else {
		h.recent = newRecentlyDone(h.recentSize)
	}
	return h
}

// serveClaimed runs a verified event's function during its delivery,
// under a claim (NewHandler's mode).
func (h *Handler) serveClaimed(ctx context.Context, w http.ResponseWriter, header http.Header, ev *payments.Event) {
	id := h.eventID(ev, header)
	leave, wait, answered := h.local(ctx, w, ev, id)
	if answered {
		return
	}
	if leave != nil {
		defer leave()
	}
	claim, claimed, err := h.claimOrWait(ctx, id, wait)
	switch {
	case err != nil:
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, err, "claim store unavailable")
		return
	case claim.Status == ClaimDone:
		h.recent.add(id)
		h.answer(ctx, w, http.StatusOK, ev, OutcomeDuplicate, nil, slog.LevelInfo, "duplicate delivery of a processed event: skipped")
		return
	case claim.Status == ClaimInProgress:
		h.refuse(ctx, w, http.StatusConflict, ev, OutcomeInProgress, nil, "event is being processed by another delivery")
		return
	case claim.Status != ClaimAcquired:
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, nil, "claim store gave an unknown claim status")
		return
	}
	h.process(ctx, w, ev, claim, claimed)
}

// eventID is the id the handler dedupes on: the one a verifier signs into a
// header (Standard Webhooks' webhook-id), else the event's own id.
func (h *Handler) eventID(ev *payments.Event, header http.Header) string {
	if v, ok := h.verifier.(EventIDVerifier); ok {
		if id := v.EventID(header); id != "" {
			return id
		}
	}
	return ev.ID
}

type claimKey struct{}

// ClaimFromContext returns the claim under which the handler runs an
// EventFunc, from the context it passes to the function. Stores that commit
// the function's work together with the completion use it.
func ClaimFromContext(ctx context.Context) (Claim, bool) {
	c, ok := ctx.Value(claimKey{}).(Claim)
	return c, ok
}

// process runs a claimed event (runClaimed) and answers: 200 when the
// function succeeded, 503 when it failed with ErrUnavailable, 500 when it
// failed otherwise or panicked.
func (h *Handler) process(ctx context.Context, w http.ResponseWriter, ev *payments.Event, claim Claim, claimed time.Time) {
	attrs, err := h.runClaimed(ctx, ev, claim, claimed)
	var nr *notRecordedError
	if errors.As(err, &nr) {
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, err, "event processed but not recorded as done", attrs...)
		return
	}
	if err != nil {
		h.failed(ctx, w, ev, err, attrs...)
		return
	}
	h.recent.add(claim.EventID)
	h.answer(ctx, w, http.StatusOK, ev, OutcomeProcessed, nil, slog.LevelInfo, "event processed", attrs...)
}

// ErrUnavailable marks an EventFunc's error as a passing one: something the
// function needs (a store, a database) cannot be reached right now. The
// handler answers such an error with 503 instead of 500, as it does when its
// own claim store is down, and releases the event like any failure, so the
// service delivers it again. Wrap it: fmt.Errorf("ledger: %w: %w",
// webhook.ErrUnavailable, err). outcome.Tracker.Wrap marks its store's
// failures so. Test: TestFunctionErrUnavailableAnswers503.
var ErrUnavailable = errors.New("webhook: unavailable for now, deliver again later")

// failed answers a function that returned err: 503 for ErrUnavailable, 500
// for any other error or a panic.
func (h *Handler) failed(ctx context.Context, w http.ResponseWriter, ev *payments.Event, err error, attrs ...slog.Attr) {
	if errors.Is(err, ErrUnavailable) {
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, err, "the function's store is unavailable", attrs...)
		return
	}
	h.answer(ctx, w, http.StatusInternalServerError, ev, OutcomeFailed, err, slog.LevelError, "event processing failed", attrs...)
}

// run calls fn with the claim in its context and turns a panic into an
// error.
func (h *Handler) run(ctx context.Context, ev *payments.Event, claim Claim) (err error) {
	ctx = context.WithValue(ctx, claimKey{}, claim)
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return h.fn(ctx, ev)
}
