package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/paymentsapi/payments-go"
)

// This file is what every delivery goes through (read, verify, parse,
// answer) and the whole of the hand-off mode (NewQueueHandler), which does
// nothing more: a delivery handed off crosses this file, the Verifier's
// (signature.go or standard.go) and the event's parse in package payments,
// and no claim or lease code (TestHandOffPathFiles).

// EnqueueFunc records one verified event in your queue, durably, before it
// returns nil: the handler then answers 200 and the sender never delivers
// the event again. It must be unique by event id (ev.ID): every delivery
// of an event, its retries, a Reconcile and a redelivery from the
// dashboard reach it, and the handler drops none of them. Return an error
// when the event is not recorded: the handler answers 503 and the service
// delivers it again. pgstore.Queue's Enqueue is one.
//
// ctx is the request's: it is cancelled if the sender hangs up. Bound
// your own calls (pgstore's Queue does, with its Timeout): the handler
// waits for the function as long as it runs. A panic is recovered and
// answered 503. The error is logged by the handler (WithLogger), so keep
// secrets and personal data out of it.
type EnqueueFunc func(ctx context.Context, ev *payments.Event) error

// NewQueueHandler returns a handler that hands each delivery off to
// enqueue: it verifies it with verifier, parses it, calls enqueue and
// answers: 200 once enqueue returned nil, 503 when it returned an error or
// panicked (the service delivers the event again); 405, 413, 401 and 400
// as a NewHandler handler does; 503 once Shutdown was called. It claims
// nothing, keeps no lease and no memory of events, and runs nothing in
// the background: the queue dedupes, and its workers run your function.
// Reconcile calls enqueue for each event listed.
//
// WithMaxBodyBytes, WithLogger and WithDeliveryObserver apply. The options
// of running the function during the delivery (WithClaimStore,
// WithClaimWait) do not: given one, NewQueueHandler panics, as it does
// when verifier or enqueue is nil, as a programming error. Tests:
// TestQueueHandlerHandsOff, TestQueueHandlerRefusesClaimOptions.
//
//	mux.Handle("POST /webhooks", webhook.NewQueueHandler(verifier, queue.Enqueue))
func NewQueueHandler(verifier Verifier, enqueue EnqueueFunc, opts ...HandlerOption) *Handler {
	if verifier == nil {
		panic("webhook: NewQueueHandler with a nil Verifier")
	}
	if enqueue == nil {
		panic("webhook: NewQueueHandler with a nil EnqueueFunc")
	}
	h := &Handler{clock: realClock{}, verifier: verifier, enqueue: enqueue, maxBody: DefaultMaxBodyBytes, claimWait: -1}
	for _, o := range opts {
		o(h)
	}
	if h.store != nil || h.claimWait != -1 {
		panic("webhook: NewQueueHandler with WithClaimStore or WithClaimWait: a handler that hands off claims nothing, " +
			"your queue dedupes by event id; drop the option, or use NewHandler to run a function during the delivery")
	}
	return h
}

// ServeHTTP handles one delivery; see Handler (NewHandler) and
// NewQueueHandler for the answers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.observer == nil {
		h.serve(r.Context(), w, r)
		return
	}
	ctx, end := h.observer(r.Context(), r)
	res := new(DeliveryResult)
	h.serve(context.WithValue(ctx, resultKey{}, res), w, r)
	end(*res)
}

func (h *Handler) serve(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	// Surprises go to the logger and the observer: with neither, nobody
	// would see them, and the delivery does not look for them.
	var found *deliverySurprises
	if h.logger != nil || h.observer != nil {
		found = &deliverySurprises{h: h, ctx: ctx}
		res, _ := ctx.Value(resultKey{}).(*DeliveryResult)
		defer found.report(res)
	}
	ev, ok := h.receive(ctx, w, r, found)
	if !ok {
		return
	}
	if !h.bg.enter() {
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeShuttingDown, nil, "the handler is shutting down")
		return
	}
	defer h.bg.leave()
	if h.enqueue == nil {
		h.serveClaimed(ctx, w, r.Header, ev)
		return
	}
	attrs, err := h.handOff(ctx, ev)
	if err != nil {
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, err, "the event could not be enqueued", attrs...)
		return
	}
	h.answer(ctx, w, http.StatusOK, ev, OutcomeEnqueued, nil, slog.LevelInfo, "event enqueued")
}

// receive reads, verifies and parses a delivery, and answers it when it is
// none. Surprises are looked for only once it verified: an unsigned
// request changes nothing the handler remembers.
func (h *Handler) receive(ctx context.Context, w http.ResponseWriter, r *http.Request, found *deliverySurprises) (*payments.Event, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(ctx, w, http.StatusMethodNotAllowed, nil, OutcomeInvalid, nil, "method not allowed", slog.String("method", r.Method))
		return nil, false
	}
	body, status, reason := h.readBody(w, r)
	if status != 0 {
		h.refuse(ctx, w, status, nil, OutcomeInvalid, nil, reason)
		return nil, false
	}
	if err := h.verifier.Verify(body, r.Header); err != nil {
		h.refuse(ctx, w, http.StatusUnauthorized, nil, OutcomeRejectedSignature, err, "invalid signature")
		return nil, false
	}
	if found != nil {
		found.headers(r.Header)
	}
	ev, err := payments.ParseEvent(body)
	if err != nil {
		h.refuse(ctx, w, http.StatusBadRequest, nil, OutcomeInvalid, err, "not a webhook event")
		return nil, false
	}
	if found != nil {
		found.event(ev)
	}
	return ev, true
}

// handOff calls enqueue, turning a panic into an error; the attributes
// are the panic's stack, to log.
func (h *Handler) handOff(ctx context.Context, ev *payments.Event) (attrs []slog.Attr, err error) {
	defer func() {
		if v := recover(); v != nil {
			p := &panicError{value: v, stack: debug.Stack()}
			attrs, err = []slog.Attr{slog.String("stack", string(p.stack))}, p
		}
	}()
	return nil, h.enqueue(ctx, ev)
}

// panicError is a panic of the EventFunc or EnqueueFunc, turned into an
// error.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// enter and leave are background's (settle.go), which Shutdown reads: here
// because every delivery counts itself in, in either mode.

// enter counts a delivery in, unless Shutdown was called. The count comes
// first, so that Shutdown, which sets closing and then reads the count,
// either sees the delivery or is seen by it.
func (b *background) enter() bool {
	b.inflight.Add(1)
	if b.closing.Load() {
		b.inflight.Add(-1)
		return false
	}
	return true
}

func (b *background) leave() { b.inflight.Add(-1) }

// presizeBody is the most readBody allocates for a body before its bytes
// arrive.
const presizeBody = 64 << 10

// readBody reads the whole body under the size limit. A non-zero status
// means the body was refused.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	if r.ContentLength > h.maxBody {
		return nil, http.StatusRequestEntityTooLarge, "body too large"
	}
	// Sized by Content-Length when the sender gave one, up to
	// presizeBody (an unverified sender's claim costs no more before its
	// bytes arrive; a wrong one only costs the buffer's growth), so that
	// an event's body is read into one allocation instead of a growing
	// series of them.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), presizeBody)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.maxBody))
	body := buf.Bytes()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, "body too large"
	case err != nil:
		return nil, http.StatusBadRequest, "body could not be read"
	}
	return body, 0, ""
}

// refuse answers an error status and logs it at warning level.
func (h *Handler) refuse(ctx context.Context, w http.ResponseWriter, status int, ev *payments.Event, outcome DeliveryOutcome, err error, reason string, attrs ...slog.Attr) {
	h.answer(ctx, w, status, ev, outcome, err, slog.LevelWarn, "webhook refused: "+reason, attrs...)
}

// answer writes status with a short text body and logs the delivery. The
// body never says more than the status: in particular not why a signature
// failed, nor what the EventFunc returned.
func (h *Handler) answer(ctx context.Context, w http.ResponseWriter, status int, ev *payments.Event, outcome DeliveryOutcome, err error, level slog.Level, msg string, attrs ...slog.Attr) {
	if res, ok := ctx.Value(resultKey{}).(*DeliveryResult); ok {
		*res = DeliveryResult{Outcome: outcome, StatusCode: status, Err: err}
		if ev != nil {
			res.EventID, res.EventType = ev.ID, ev.Type
		}
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, http.StatusText(status))
	h.log(ctx, level, msg, ev, append(attrs, slog.Int("status", status))...)
}

func (h *Handler) log(ctx context.Context, level slog.Level, msg string, ev *payments.Event, attrs ...slog.Attr) {
	if h.logger == nil || !h.logger.Enabled(ctx, level) {
		return
	}
	if ev != nil {
		attrs = append([]slog.Attr{slog.String("event_id", ev.ID), slog.String("event_type", string(ev.Type))}, attrs...)
	}
	h.logger.LogAttrs(ctx, level, msg, attrs...)
}

// DeliveryOutcome is how the handler answered a delivery, for metrics.
type DeliveryOutcome string

// Outcomes of a delivery.
const (
	OutcomeProcessed         DeliveryOutcome = "processed"          // 200: your function succeeded
	OutcomeEnqueued          DeliveryOutcome = "enqueued"           // 200: your EnqueueFunc recorded it (NewQueueHandler)
	OutcomeDuplicate         DeliveryOutcome = "duplicate"          // 200: already processed
	OutcomeInProgress        DeliveryOutcome = "in_progress"        // 409: another delivery holds it
	OutcomeFailed            DeliveryOutcome = "failed"             // 500: your function failed or panicked
	OutcomeRejectedSignature DeliveryOutcome = "rejected_signature" // 401
	OutcomeInvalid           DeliveryOutcome = "invalid"            // 400, 405, 413: not a delivery
	OutcomeStoreUnavailable  DeliveryOutcome = "store_unavailable"  // 503: the claim store, one the function needs (ErrUnavailable), or the EnqueueFunc failed
	OutcomeShuttingDown      DeliveryOutcome = "shutting_down"      // 503: Shutdown was called
)

// DeliveryResult is what the handler did with one delivery.
type DeliveryResult struct {
	Outcome    DeliveryOutcome
	StatusCode int
	// EventID and EventType are set once the delivery was verified and
	// parsed.
	EventID   string
	EventType payments.EventType
	// Err is the EventFunc's or EnqueueFunc's error, or why the delivery
	// was refused.
	Err error
	// Surprises are what a verified delivery held that the SDK does not
	// assume (an unknown signature header, an unknown event kind, body
	// member or payment status), every one, in the order met; nil when
	// none, and always nil for a delivery that did not verify. They never
	// change the answer. Tests: TestHandlerSurprisesOncePerKind,
	// TestUnsignedRequestChangesNoSurpriseMemory.
	Surprises []payments.Surprise
}

// DeliveryObserver is called when a delivery arrives; it returns the context
// the handler uses for it (carrying a tracing span, say) and a function
// called once with the result. The paymentsotel package has one.
type DeliveryObserver func(ctx context.Context, r *http.Request) (context.Context, func(DeliveryResult))

// WithDeliveryObserver makes the handler report every delivery to obs.
func WithDeliveryObserver(obs DeliveryObserver) HandlerOption {
	return func(h *Handler) { h.observer = obs }
}

type resultKey struct{}
