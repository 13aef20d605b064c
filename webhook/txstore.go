package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/paymentsapi/payments-go"
)

// TxStore is a Store that can claim an event inside the database
// transaction that runs the EventFunc and records the event done, so that
// the claim, the function's writes and the record commit together: one
// commit per event, none for a duplicate. While the transaction is open,
// the database's row lock is the claim's lease: the handler neither renews
// it nor settles it. The handler detects a TxStore among the stores given
// to WithStore, and serves each delivery through ClaimAndRun (Reconcile
// keeps to Claim, Complete and Release, which a TxStore also implements).
type TxStore interface {
	Store
	// ClaimAndRun claims eventID and, when it acquired it, calls run with
	// the claim, in the transaction that then records the event done. It
	// returns:
	//
	//   - 0 and a nil error: the store leaves this delivery to the usual
	//     path (Claim, the function, Complete or Release);
	//   - ClaimDone or ClaimInProgress, without calling run (another
	//     delivery held the event longer than wait);
	//   - ClaimAcquired once run was called, with run's error as it is
	//     when run failed (everything rolled back);
	//   - any other error: the store failed (answered 503), whether or
	//     not run was called; nothing of run's was committed, or the
	//     event is recorded done with it.
	//
	// Every statement of the store's is bounded by its own timeout, and
	// ClaimAndRun cancels run's context when the database stops answering.
	ClaimAndRun(ctx context.Context, eventID string, wait time.Duration, run func(ctx context.Context, claim Claim) error) (ClaimStatus, error)
}

// serveTx serves a delivery through the handler's store when it is a
// TxStore, and reports whether it did.
func (h *Handler) serveTx(ctx context.Context, w http.ResponseWriter, ev *payments.Event, id string, wait time.Duration) bool {
	ts, ok := h.store.(TxStore)
	if !ok {
		return false
	}
	start := time.Now()
	var fnErr error
	status, err := ts.ClaimAndRun(ctx, id, wait, func(ctx context.Context, claim Claim) error {
		fnErr = h.run(ctx, ev, claim)
		return fnErr
	})
	attrs := []slog.Attr{slog.String("duration", time.Since(start).String())}
	switch {
	case status == 0 && err == nil:
		return false
	case fnErr != nil && errors.Is(err, fnErr):
		var p *panicError
		if errors.As(fnErr, &p) {
			attrs = append(attrs, slog.String("stack", string(p.stack)))
		}
		h.failed(ctx, w, ev, fnErr, attrs...)
	case err != nil:
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, err, "event store unavailable", attrs...)
	case status == ClaimDone:
		h.recent.add(id)
		h.answer(ctx, w, http.StatusOK, ev, OutcomeDuplicate, nil, slog.LevelInfo, "duplicate delivery of a processed event: skipped")
	case status == ClaimInProgress:
		h.refuse(ctx, w, http.StatusConflict, ev, OutcomeInProgress, nil, "event is being processed by another delivery")
	case status == ClaimAcquired:
		h.recent.add(id)
		h.answer(ctx, w, http.StatusOK, ev, OutcomeProcessed, nil, slog.LevelInfo, "event processed", attrs...)
	default:
		h.refuse(ctx, w, http.StatusServiceUnavailable, ev, OutcomeStoreUnavailable, nil, "event store gave an unknown claim status")
	}
	return true
}
