package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
)

// QuoteLifetime is how long a quote can be confirmed after it was created.
const QuoteLifetime = 5 * time.Minute

// Payment is a payment (transaction). A payment returned by
// PaymentsService.Initiate carries the Quote to confirm.
type Payment struct {
	APIResource `json:"-"`

	ID              string          `json:"id"`
	Reference       string          `json:"reference"`
	Status          PaymentStatus   `json:"status"`
	Amount          decimal.Decimal `json:"amount"`
	Currency        string          `json:"currency"`
	Description     string          `json:"description"`
	Type            string          `json:"type"`
	SubType         string          `json:"sub_type"`
	Category        string          `json:"category"`
	TransactionDate time.Time       `json:"transaction_date"`
	// Tags are comma-separated, as the service sends them.
	Tags        string    `json:"tags"`
	IsReversed  bool      `json:"is_reversed"`
	IsCompleted bool      `json:"is_completed"`
	Channel     string    `json:"channel"`
	Notes       string    `json:"notes"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`

	// Quote is the quote created by Initiate: fee, exchange rate, total
	// amount and expiry. It is nil on payments that carry no quote, and on
	// those (from Confirm or an event) whose quote cannot be read whole: a
	// Quote never holds an amount the service did not send. Initiate fails
	// instead (see PaymentsService.Initiate).
	Quote *Quote `json:"quote,omitempty"`
}

// PaymentStatus is the state of a payment. The specification shows only
// "pending"; the other constants follow the payment event names. Values the SDK
// does not know are passed through unchanged.
type PaymentStatus string

// Payment statuses. Only PaymentStatusPending is published by the
// specification; the rest mirror the payment.* event kinds.
const (
	PaymentStatusPending   PaymentStatus = "pending"
	PaymentStatusCompleted PaymentStatus = "completed"
	PaymentStatusFailed    PaymentStatus = "failed"
	PaymentStatusRejected  PaymentStatus = "rejected"
)

// Quote is the price of a payment, valid until ExpiresAt. Confirm it with
// PaymentsService.Confirm before then.
type Quote struct {
	// QuoteID identifies the quote; PaymentConfirmParams.QuoteID takes it.
	QuoteID      string          `json:"quote_id"`
	Amount       decimal.Decimal `json:"amount"`
	Fee          decimal.Decimal `json:"fee"`
	ExchangeRate decimal.Decimal `json:"exchange_rate"`
	// TotalAmount is the total amount to collect.
	TotalAmount decimal.Decimal `json:"total_amount"`
	Currency    string          `json:"currency"`
	// ExpiresAt comes from the response, or is the quote's (else the
	// payment's, else the moment it was received) creation time plus
	// QuoteLifetime. It is for display: only the service judges
	// expiry, and Confirm always asks it.
	ExpiresAt time.Time `json:"expires_at"`

	// masks is the Client's that received the quote, so that Format masks
	// its API key wherever the service echoed it.
	masks *masker
}

// setResponse records the response that carried the payment, and lets its
// quote print with the Client's API key masked.
func (p *Payment) setResponse(resp *Response, raw json.RawMessage) {
	p.APIResource.setResponse(resp, raw)
	if p.Quote != nil && resp != nil {
		p.Quote.masks = resp.masks
	}
}

// ConfirmParams returns the params that confirm this payment's quote. It
// returns nil when the payment carries no quote.
func (p *Payment) ConfirmParams() *PaymentConfirmParams {
	if p.Quote == nil {
		return nil
	}
	return &PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID}
}

// PaymentInitiateParams describe a payment to quote. Amount (positive),
// Currency, RecipientID (a UUID) and Reference are required: the
// specification does not say which fields are, and a payment without any of
// these cannot be meant.
type PaymentInitiateParams struct {
	// Amount is sent as a JSON number with its exact digits.
	Amount              Amount `json:"amount"`
	Currency            string `json:"currency"`
	RecipientID         string `json:"recipient_id"`
	Description         string `json:"description,omitempty"`
	Reference           string `json:"reference"`
	TransactionType     string `json:"transaction_type,omitempty"`
	TransactionCategory string `json:"transaction_category,omitempty"`
	// TransactionTags are comma-separated.
	TransactionTags  string `json:"transaction_tags,omitempty"`
	TransactionNotes string `json:"transaction_notes,omitempty"`
	Channel          string `json:"channel,omitempty"`
	SubType          string `json:"sub_type,omitempty"`
}

// PaymentConfirmParams name the quote to execute. Payment.ConfirmParams
// builds them from an initiated payment.
type PaymentConfirmParams struct {
	Reference string `json:"reference"`
	QuoteID   string `json:"quote_id"`
}

var (
	// opPaymentsInitiate needs the quote whole; Initiate adds the check
	// that the answer agrees with the amount and currency sent.
	opPaymentsInitiate = &operation{Operation: Operation{Name: "payments.initiate", Method: http.MethodPost, PathTemplate: "/payments/initiate"}, idempotent: true, status: http.StatusOK,
		check: checkPayment, whole: true, agree: initiateAgrees}
	opPaymentsConfirm = &operation{Operation: Operation{Name: "payments.confirm", Method: http.MethodPost, PathTemplate: "/payments/confirm"}, idempotent: true, status: http.StatusOK,
		check: checkPayment}
)

// checkPayment: a payment answer must say which payment (id, reference) and
// in what state (status): an empty status must never read as a refusal.
func checkPayment(out any) string {
	p := out.(*Payment)
	return lacking("id", p.ID, "status", string(p.Status), "reference", p.Reference)
}

// initiateAgrees is Initiate's agree: the initiated payment must carry the
// amount and currency sent. (A WithBodyField field cannot be the amount:
// it may not shadow the params' own.)
func initiateAgrees(sent any, _ []bodyField, out any) (string, []string) {
	params, p := sent.(*PaymentInitiateParams), out.(*Payment)
	if reason := params.agrees(p); reason != "" {
		return reason, params.amountsOf(p)
	}
	return "", nil
}

// PaymentsService initiates and confirms payments. Reach it as
// Client.Payments.
type PaymentsService struct{ client *Client }

// Initiate creates a payment quote (POST /payments/initiate). Nothing is paid
// until the quote is confirmed. The call carries an Idempotency-Key, so a
// retried call never creates a second payment; pass WithIdempotencyKey with a
// key derived from your own order to make that hold across process restarts.
//
// The returned payment always carries a whole Quote, every amount read from
// the response: a quote whose quote id, amount, fee, exchange rate (positive),
// total amount (positive) or currency cannot be read, where
// docs/assumptions.md says it stands (data.quote, or flat in data), is a
// *MalformedResponseError naming each one missing and where it was looked
// for, never a zero. So is an answer whose amount or currency, the
// payment's or the quote's, is not the one sent (an amount 100 times the
// one sent: the service counting in minor units), naming both amounts.
// Nothing is paid then: do not confirm. Tests: TestInitiateQuoteNeverZero,
// TestInitiateAmountDisagrees.
func (s *PaymentsService) Initiate(ctx context.Context, params *PaymentInitiateParams, opts ...RequestOption) (*Payment, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	op := *opPaymentsInitiate
	op.sent = params
	p := new(Payment)
	if _, err := s.client.do(ctx, &op, "", params, p, opts); err != nil {
		return nil, err
	}
	if p.Quote.ExpiresAt.IsZero() {
		p.Quote.ExpiresAt = s.client.now().Add(QuoteLifetime) // an estimate: see Quote.ExpiresAt
	}
	return p, nil
}

// Confirm executes a quoted payment (POST /payments/confirm) and returns the
// payment after execution. It carries an Idempotency-Key like Initiate.
//
// Only the service judges whether a quote has expired: Confirm always sends
// the call, and the service's refusal is an *APIError matching
// CodeQuoteExpired (errors.Is(err, payments.CodeQuoteExpired)). A Confirm
// retried with the key of an earlier attempt whose answer was lost returns
// what that attempt did, even past the quote's expiry.
//
// A nil error means the service took the confirmation, not that the money
// moved: check the returned payment's Status (and IsCompleted). A payment the
// service refused to execute, for example above the recipient's limit, comes
// back with PaymentStatusRejected; the payment.completed, payment.failed and
// payment.rejected webhooks report the final outcome. A *TransportError or
// *MalformedResponseError means the outcome is unknown: call Confirm again
// with WithIdempotencyKey and the key the error carries (IdempotencyKeyOf) to
// learn it; never initiate again on such an error.
func (s *PaymentsService) Confirm(ctx context.Context, params *PaymentConfirmParams, opts ...RequestOption) (*Payment, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	p := new(Payment)
	if _, err := s.client.do(ctx, opPaymentsConfirm, "", params, p, opts); err != nil {
		return nil, err
	}
	return p, nil
}
