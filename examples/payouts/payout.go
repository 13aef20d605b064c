package main

import (
	"context"
	"errors"
	"fmt"

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

// keyFor derives the idempotency key of one step of a payout: a UUIDv5 of
// "<step>:<payout id>". The same payout gets the same keys on every run, so
// a run started again after a crash repeats each call with the key of the
// first try, and the service answers with what it did then instead of
// paying a second time. A random key per run would pay twice.
func keyFor(step, payoutID string) string {
	return uuid.NewSHA1(uuid.MustParse(keyNamespace), []byte(step+":"+payoutID)).String()
}

// endregion

// payer pays rows through one client and writes each outcome to the journal.
type payer struct {
	client  *payments.Client
	journal *journal
}

// pay takes a row from its last journal record (none: from the start) to a
// final record, or to an unknown one when the service could not be
// reached. It returns the last record written, or an error when the
// journal cannot be written (then the program must stop) or ctx ended.
func (p *payer) pay(ctx context.Context, r row, last record) (record, error) {
	quoteID := last.QuoteID
	if quoteID == "" {
		rec := record{PayoutID: r.PayoutID, Step: "initiate", IdempotencyKey: keyFor("initiate", r.PayoutID)}
		payment, err := p.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount:      r.Amount,
			Currency:    r.Currency,
			RecipientID: r.RecipientID,
			Reference:   r.PayoutID,
		}, payments.WithIdempotencyKey(rec.IdempotencyKey))
		if err != nil || payment.Quote == nil {
			return p.failed(ctx, rec, err)
		}
		quoteID = payment.Quote.QuoteID
		rec.Event, rec.QuoteID, rec.PaymentID, rec.Status = eventInitiated, quoteID, payment.ID, string(payment.Status)
		if err := p.journal.append(rec); err != nil {
			return rec, err
		}
	}

	rec := record{PayoutID: r.PayoutID, Step: "confirm", IdempotencyKey: keyFor("confirm", r.PayoutID), QuoteID: quoteID}
	payment, err := p.client.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: r.PayoutID, QuoteID: quoteID},
		payments.WithIdempotencyKey(rec.IdempotencyKey))
	if err != nil {
		return p.failed(ctx, rec, err)
	}
	rec.Event, rec.PaymentID, rec.Status = eventDone, payment.ID, string(payment.Status)
	if payment.Status == payments.PaymentStatusRejected || payment.Status == payments.PaymentStatusFailed {
		rec.Event, rec.Reason = eventFailed, "the service "+string(payment.Status)+" the payment"
	}
	return rec, p.journal.append(rec)
}

// failed records a step that returned err: failed for good when the
// service refused it (or nothing was sent), unknown otherwise. A context
// that ended is not an outcome: nothing is written and the row stays as
// it was, to be taken up by the next run.
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
		// The service refused it (a 4xx it answered): final. A 5xx, even
		// one not retried (501, a proxy's 52x), or a 3xx says nothing of
		// whether the payment was made: it stays unknown, for the next run
		// to retry with the same keys.
		rec.Event = eventFailed
		if errors.Is(err, payments.CodeDuplicateReference) || errors.Is(err, payments.CodeQuoteAlreadyConfirmed) {
			// Another call, with other keys, used this payout id: it may
			// be paid. Look it up; never pay it again from here.
			rec.Reason = fmt.Sprintf("payout id used by another payment, check it before anything else: %v", err)
		}
	}
	return rec, p.journal.append(rec)
}
