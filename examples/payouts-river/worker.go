package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// region keys
// keyNamespace scopes the idempotency keys: the single-machine example's,
// so that a payout id it tried and then loaded here is answered by the
// service with what it did, not paid again.
const keyNamespace = "3d1c2a8e-6f0b-4c55-9a43-0f6c8b1e7d20"

// keyFor derives the idempotency key of one step of a payout's key
// generation: a UUIDv5 of "<step>:<payout id>" for generation 0, and of
// "<step>/<generation>:<payout id>" after it. Every attempt of the job, in
// any process, sends the same keys for the same generation, so the service
// answers a repeated call with what it did the first time. The generation
// is in the payout's row and moves only after a refusal a later try may
// cure (a new key would otherwise replay it for ever) or an expired quote:
// never after an unknown outcome.
func keyFor(step, payoutID string, generation int) string {
	name := step + ":" + payoutID
	if generation > 0 {
		name = step + "/" + strconv.Itoa(generation) + ":" + payoutID
	}
	return uuid.NewSHA1(uuid.MustParse(keyNamespace), []byte(name)).String()
}

// endregion

// The steps of a payout.
const (
	stepInitiate = "initiate"
	stepConfirm  = "confirm"
)

// curable reports whether a refusal with this code may be cured by a later
// try with new keys: nothing was paid, and the cause can go away.
func curable(code payments.ErrorCode) bool {
	switch code {
	case payments.CodeInsufficientBalance, payments.CodeRecipientNotVerified,
		payments.CodeRecipientVerificationFailed, payments.CodeQuoteExpired:
		return true
	}
	return false
}

// nextGeneration returns where a payout refused for a curable cause starts
// again: the next generation, confirming the same quote when the confirm
// was refused for another cause than its expiry, else initiating anew.
func nextGeneration(last record) (generation int, quoteID string) {
	if last.Step == stepConfirm && last.Code != string(payments.CodeQuoteExpired) {
		return last.Generation + 1, last.QuoteID
	}
	return last.Generation + 1, ""
}

// workConfig is how a worker paces its jobs.
type workConfig struct {
	// snoozeMin and snoozeMax bound the wait of a payout refused for a
	// curable cause before it is tried again: snoozeMin, doubling with
	// each refusal, up to snoozeMax.
	snoozeMin, snoozeMax time.Duration
	// awaitFor is how long a job waits for its payment's outcome before
	// it lets its worker go (JobSnooze) and looks again after recheck; 0
	// (the default) looks once and does not wait.
	awaitFor, recheck time.Duration
	// listEvery is the listing's period: a job that finds no outcome asks
	// for a listing of this period (one for the cluster), so that outcomes
	// come even while River's leader, which enqueues the periodic one, is
	// being replaced.
	listEvery time.Duration
}

// payoutWorker pays one payout per job.
type payoutWorker struct {
	river.WorkerDefaults[payoutArgs]
	pool    *pgxpool.Pool
	client  *payments.Client
	tracker *outcome.Tracker
	cfg     workConfig
	logger  *slog.Logger
}

// Work takes a payout from where its row says it got to: it pays it (at
// most one payment per payout: see keyFor), then waits for its outcome, and
// completes the job in the transaction that records it. A refusal that
// cannot be cured cancels the job with the reason; a curable one snoozes it
// with back-off; an unknown outcome fails the attempt, and River tries again
// with back-off (same keys).
func (w *payoutWorker) Work(ctx context.Context, job *river.Job[payoutArgs]) error {
	rec, err := claim(ctx, w.pool, job)
	if errors.Is(err, pgx.ErrNoRows) {
		return river.JobCancel(fmt.Errorf("payout %s has no row in the payouts table: load its file with the load command", job.Args.PayoutID))
	}
	if err != nil {
		return fmt.Errorf("payout %s: read its row: %w", job.Args.PayoutID, err)
	}
	switch rec.Event {
	case eventOutcome:
		return w.complete(ctx, job, rec)
	case eventFailed:
		return river.JobCancel(fmt.Errorf("payout %s: %s", rec.PayoutID, rec.Reason))
	case eventDone:
		return w.awaitOutcome(ctx, job, rec)
	}
	if rec, err = w.pay(ctx, job, rec); err != nil {
		return err
	}
	switch rec.Event {
	case eventDone:
		return w.awaitOutcome(ctx, job, rec)
	case eventRefused:
		return river.JobSnooze(w.backoff(rec.Refusals))
	case eventFailed:
		return river.JobCancel(fmt.Errorf("payout %s: %s", rec.PayoutID, rec.Reason))
	}
	return fmt.Errorf("payout %s: %s (River tries again with back-off, with the same keys)", rec.PayoutID, rec.Reason)
}

// backoff is the wait after the n-th curable refusal.
func (w *payoutWorker) backoff(n int) time.Duration {
	d := w.cfg.snoozeMin
	for i := 1; i < n && d < w.cfg.snoozeMax; i++ {
		d *= 2
	}
	return min(d, w.cfg.snoozeMax)
}

// pay takes a payout from its row to done, failed, refused or unknown,
// writing each step (fenced) before it goes on. A payout refused for a
// curable cause is tried under the next generation; an expired quote moves
// it on at once, once.
func (w *payoutWorker) pay(ctx context.Context, job *river.Job[payoutArgs], last record) (record, error) {
	gen, quoteID, fee := last.Generation, last.QuoteID, last.Fee
	if last.Event == eventRefused {
		gen, quoteID = nextGeneration(last)
	}
	if quoteID == "" {
		fee = ""
	}
	rec, err := w.payGeneration(ctx, job, last, gen, quoteID, fee)
	if err == nil && rec.Event == eventRefused && rec.Code == string(payments.CodeQuoteExpired) {
		gen, quoteID = nextGeneration(rec)
		rec, err = w.payGeneration(ctx, job, rec, gen, quoteID, "")
	}
	return rec, err
}

// step returns the record of one step of generation gen, from base.
func step(base record, name string, gen int) record {
	rec := base
	rec.Step, rec.Generation, rec.Code, rec.Reason, rec.Stan = name, gen, "", "", ""
	return rec
}

// payGeneration runs the steps of one key generation: initiate (unless
// quoteID is the generation's quote already), then confirm.
func (w *payoutWorker) payGeneration(ctx context.Context, job *river.Job[payoutArgs], base record, gen int, quoteID, fee string) (record, error) {
	if quoteID == "" {
		rec := step(base, stepInitiate, gen)
		rec.QuoteID, rec.PaymentID, rec.Fee = "", "", ""
		payment, err := w.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount:      payments.Amount{Decimal: rec.Amount},
			Currency:    rec.Currency,
			RecipientID: rec.RecipientID,
			Reference:   rec.PayoutID,
		}, payments.WithIdempotencyKey(keyFor(stepInitiate, rec.PayoutID, gen)))
		if err != nil || payment.Quote == nil {
			return w.failed(ctx, job, rec, err)
		}
		quoteID, fee = payment.Quote.QuoteID, payment.Quote.Fee.String()
		rec.Event, rec.QuoteID, rec.PaymentID, rec.Fee = eventInitiated, quoteID, payment.ID, fee
		if err := w.write(ctx, job, rec); err != nil {
			return rec, err
		}
		base = rec
	}
	rec := step(base, stepConfirm, gen)
	rec.QuoteID, rec.Fee = quoteID, fee
	payment, err := w.client.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: rec.PayoutID, QuoteID: quoteID},
		payments.WithIdempotencyKey(keyFor(stepConfirm, rec.PayoutID, gen)))
	if err != nil {
		return w.failed(ctx, job, rec, err)
	}
	rec.Event, rec.PaymentID = eventDone, payment.ID
	if payment.Quote != nil {
		rec.Fee = payment.Quote.Fee.String()
	}
	if resp := payment.LastResponse(); resp != nil {
		rec.Stan = resp.Stan
	}
	if err := w.write(ctx, job, rec); err != nil {
		return rec, err
	}
	// For Tracker.Stuck: a confirmed payment whose outcome is late.
	if err := w.tracker.Confirmed(ctx, payment); err != nil && w.logger != nil {
		w.logger.WarnContext(ctx, "payouts: recording the confirmation in the tracker failed", slog.String("payout_id", rec.PayoutID), slog.String("error", err.Error()))
	}
	return rec, nil
}

// failed records a step that returned err: failed for good when the
// service refused it (or nothing was sent), refused when that refusal has a
// cause a later try may cure, unknown otherwise. A context that ended is not
// an outcome: nothing is written.
func (w *payoutWorker) failed(ctx context.Context, job *river.Job[payoutArgs], rec record, err error) (record, error) {
	if ctx.Err() != nil {
		return rec, fmt.Errorf("payout %s: stopped: %w", rec.PayoutID, ctx.Err())
	}
	if err == nil {
		err = errors.New("the initiate answer has no quote")
	}
	rec.Event, rec.Reason = eventUnknown, err.Error()
	var apiErr *payments.APIError
	switch {
	case errors.Is(err, payments.ErrInvalidParams):
		rec.Event = eventFailed // nothing was sent
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 && !apiErr.Temporary():
		// The service refused it, fresh or replayed for the key: nothing
		// was paid by this key. A 5xx or a 3xx says nothing of whether the
		// payment was made: it stays unknown, retried with the same keys.
		rec.Event, rec.Code = eventFailed, string(apiErr.Code)
		switch {
		case errors.Is(err, payments.CodeDuplicateReference) || errors.Is(err, payments.CodeQuoteAlreadyConfirmed):
			rec.Reason = fmt.Sprintf("payout id used by another payment, check it before anything else: %v", err)
		case curable(apiErr.Code):
			rec.Event = eventRefused
			rec.Refusals++
			rec.Reason = fmt.Sprintf("refused, nothing paid; tried again under generation %d after a wait: %v", rec.Generation+1, err)
		}
	}
	return rec, w.write(ctx, job, rec)
}

// write saves rec if the attempt is still the job's.
func (w *payoutWorker) write(ctx context.Context, job *river.Job[payoutArgs], rec record) error {
	err := fenced(ctx, w.pool, job, func(tx pgx.Tx) error { return save(ctx, tx, rec) })
	if err != nil {
		return fmt.Errorf("payout %s: record %s of %s: %w", rec.PayoutID, rec.Event, rec.Step, err)
	}
	return nil
}

// awaitOutcome looks for the confirmed payment's final state in the
// tracker (fed by the event listing, in a queue of its own, or by a webhook
// receiver on the same outcome table), waiting up to awaitFor (0: not at
// all), then records it and completes the job in one transaction; when it
// has not come, the job snoozes, letting its worker go, and looks again
// after recheck.
func (w *payoutWorker) awaitOutcome(ctx context.Context, job *river.Job[payoutArgs], rec record) error {
	var (
		o   outcome.Outcome
		err error
	)
	if w.cfg.awaitFor > 0 {
		actx, cancel := context.WithTimeout(ctx, w.cfg.awaitFor)
		var res outcome.Result
		res, err = w.tracker.Await(actx, rec.PaymentID)
		cancel()
		o = res.Outcome
	} else if o, err = w.tracker.Get(ctx, rec.PaymentID); err == nil && o.Conflict != nil {
		err = o.Conflict
	}
	var conflict *outcome.ConflictError
	switch {
	case errors.As(err, &conflict):
		rec.Reason = conflict.Error() // the first final state stands
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("payout %s: stopped while awaiting its outcome: %w", rec.PayoutID, ctx.Err())
	case err != nil && w.cfg.awaitFor == 0 && !errors.Is(err, outcome.ErrNotFound):
		return fmt.Errorf("payout %s: read its outcome: %w (River looks again with back-off)", rec.PayoutID, err)
	case err != nil || !o.State.Final():
		if rc, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil && w.cfg.listEvery > 0 {
			if _, err := rc.Insert(ctx, listArgs{}, listOpts(w.cfg.listEvery)); err != nil && w.logger != nil {
				w.logger.WarnContext(ctx, "payouts: asking for an event listing failed (the periodic one still comes)", slog.String("error", err.Error()))
			}
		}
		return river.JobSnooze(w.cfg.recheck)
	}
	step, _ := o.Decided()
	rec.Event, rec.State, rec.EventID = eventOutcome, string(o.State), step.EventID
	return w.complete(ctx, job, rec)
}

// complete records rec and completes the job in one fenced transaction.
func (w *payoutWorker) complete(ctx context.Context, job *river.Job[payoutArgs], rec record) error {
	err := fenced(ctx, w.pool, job, func(tx pgx.Tx) error {
		if err := save(ctx, tx, rec); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	if err != nil {
		return fmt.Errorf("payout %s: record its outcome and complete the job: %w", rec.PayoutID, err)
	}
	return nil
}
