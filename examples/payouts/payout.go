package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// row is one payout of the CSV file.
type row struct {
	RecipientID string
	Amount      decimal.Decimal
	Currency    string
	// PayoutID is the merchant's own id of the payout: unique for ever, it
	// names the payment (its reference) and derives its idempotency keys.
	PayoutID string
}

// region keys
// keyNamespace scopes the idempotency keys this program derives.
const keyNamespace = "3d1c2a8e-6f0b-4c55-9a43-0f6c8b1e7d20"

// keyFor derives the idempotency key of one step of a payout's key
// generation: a UUIDv5 of "<step>:<payout id>" for generation 0, and of
// "<step>/<generation>:<payout id>" after it. The same payout and
// generation get the same keys on every run, so a run started again after
// a crash repeats each call with the key of the first try, and the service
// answers with what it did then instead of paying a second time. A random
// key per run would pay twice.
//
// The service replays a refusal for its key too, so a refusal that a later
// try can cure (the balance funded, the recipient verified, a quote that
// expired) is tried again under the next generation's keys, recorded in the
// journal: only ever after a refusal, an outcome known to have paid nothing.
func keyFor(step, payoutID string, generation int) string {
	name := step + ":" + payoutID
	if generation > 0 {
		name = step + "/" + strconv.Itoa(generation) + ":" + payoutID
	}
	return uuid.NewSHA1(uuid.MustParse(keyNamespace), []byte(name)).String()
}

// endregion

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

// nextGeneration returns where a payout refused for a curable cause (last,
// an eventRefused record) starts again: the next generation, confirming the
// same quote when the confirm was refused for another cause than its
// expiry, else initiating anew ("" quote).
func nextGeneration(last record) (generation int, quoteID string) {
	if last.Step == stepConfirm && last.Code != string(payments.CodeQuoteExpired) {
		return last.Generation + 1, last.QuoteID
	}
	return last.Generation + 1, ""
}

// The steps of a payout.
const (
	stepInitiate = "initiate"
	stepConfirm  = "confirm"
)

// payer pays rows through one client and writes each outcome to the journal.
type payer struct {
	client  *payments.Client
	journal *journal
}

// pay takes a row from its last journal record (none: from the start) to a
// final record, to an unknown one when the service could not be reached,
// or to a refused one (a cause a later run may cure). It returns the last
// record written, or an error when the journal cannot be written (then the
// program must stop) or ctx ended.
//
// A row refused for a curable cause in an earlier run is tried again under
// the next key generation; an unknown outcome is always repeated with the
// keys it was tried with. A quote that expired (a run restarted long after
// a crash) needs a new one at once: that refusal moves the row to the next
// generation within the run, once.
func (p *payer) pay(ctx context.Context, r row, last record) (record, error) {
	gen, quoteID := last.Generation, last.QuoteID
	if last.Event == eventRefused {
		gen, quoteID = nextGeneration(last)
	}
	fee := last.Fee
	if quoteID == "" {
		fee = ""
	}
	rec, err := p.payGeneration(ctx, r, gen, quoteID, fee)
	if err == nil && rec.Event == eventRefused && rec.Code == string(payments.CodeQuoteExpired) {
		gen, quoteID = nextGeneration(rec)
		rec, err = p.payGeneration(ctx, r, gen, quoteID, "")
	}
	return rec, err
}

// payGeneration runs the steps of one key generation: initiate (unless
// quoteID is the generation's quote already, whose fee is fee), then
// confirm. A confirmed payment is journaled done whatever its status: its
// final state comes from its event (see awaitOutcomes).
func (p *payer) payGeneration(ctx context.Context, r row, gen int, quoteID, fee string) (record, error) {
	if quoteID == "" {
		rec := record{PayoutID: r.PayoutID, Step: stepInitiate, Generation: gen, IdempotencyKey: keyFor(stepInitiate, r.PayoutID, gen)}
		payment, err := p.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount:      payments.Amount{Decimal: r.Amount},
			Currency:    r.Currency,
			RecipientID: r.RecipientID,
			Reference:   r.PayoutID,
		}, payments.WithIdempotencyKey(rec.IdempotencyKey))
		if err != nil || payment.Quote == nil {
			return p.failed(ctx, rec, err)
		}
		quoteID, fee = payment.Quote.QuoteID, payment.Quote.Fee.String()
		rec.Event, rec.QuoteID, rec.PaymentID, rec.Status, rec.Fee = eventInitiated, quoteID, payment.ID, string(payment.Status), fee
		if err := p.journal.append(rec); err != nil {
			return rec, err
		}
	}

	rec := record{PayoutID: r.PayoutID, Step: stepConfirm, Generation: gen, IdempotencyKey: keyFor(stepConfirm, r.PayoutID, gen), QuoteID: quoteID, Fee: fee}
	payment, err := p.client.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: r.PayoutID, QuoteID: quoteID},
		payments.WithIdempotencyKey(rec.IdempotencyKey))
	if err != nil {
		return p.failed(ctx, rec, err)
	}
	rec.Event, rec.PaymentID, rec.Status = eventDone, payment.ID, string(payment.Status)
	if payment.Quote != nil {
		rec.Fee = payment.Quote.Fee.String()
	}
	if resp := payment.LastResponse(); resp != nil {
		rec.Stan = resp.Stan
	}
	return rec, p.journal.append(rec)
}

// failed records a step that returned err: failed for good when the
// service refused it (or nothing was sent), refused when that refusal has
// a cause a later try may cure, unknown otherwise. A context that ended is
// not an outcome: nothing is written and the row stays as it was, to be
// taken up by the next run.
func (p *payer) failed(ctx context.Context, rec record, err error) (record, error) {
	if ctx.Err() != nil {
		return rec, ctx.Err()
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
		// The service refused it (a 4xx it answered, fresh or replayed for
		// the key): nothing was paid by this key. A 5xx, even one not
		// retried (501, a proxy's 52x), or a 3xx says nothing of whether
		// the payment was made: it stays unknown, for the next run to
		// retry with the same keys.
		rec.Event, rec.Code = eventFailed, string(apiErr.Code)
		switch {
		case errors.Is(err, payments.CodeDuplicateReference) || errors.Is(err, payments.CodeQuoteAlreadyConfirmed):
			// Another call, with other keys, used this payout id: it may
			// be paid. Look it up; never pay it again from here.
			rec.Reason = fmt.Sprintf("payout id used by another payment, check it before anything else: %v", err)
		case curable(apiErr.Code):
			// The same keys would replay this refusal for ever: the next
			// try uses the next generation's.
			rec.Event = eventRefused
			rec.Reason = fmt.Sprintf("refused, nothing paid; fix the cause and run again (generation %d is next): %v", rec.Generation+1, err)
		}
	}
	return rec, p.journal.append(rec)
}
