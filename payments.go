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
	// amount and expiry. It is nil on payments that carry no quote.
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
	opPaymentsInitiate = &operation{Operation: Operation{Name: "payments.initiate", Method: http.MethodPost, PathTemplate: "/payments/initiate"}, idempotent: true,
		check: func(out any) string {
			if reason := checkPayment(out); reason != "" {
				return reason
			}
			if q := out.(*Payment).Quote; q == nil || q.QuoteID == "" {
				return "the initiate response carries no quote id"
			}
			return ""
		}}
	opPaymentsConfirm = &operation{Operation: Operation{Name: "payments.confirm", Method: http.MethodPost, PathTemplate: "/payments/confirm"}, idempotent: true,
		check: checkPayment}
)

// checkPayment: a payment answer must say which payment (id, reference) and
// in what state (status): an empty status must never read as a refusal.
func checkPayment(out any) string {
	p := out.(*Payment)
	return lacking("id", p.ID, "status", string(p.Status), "reference", p.Reference)
}

// PaymentsService initiates and confirms payments. Reach it as
// Client.Payments.
type PaymentsService struct{ client *Client }

// Initiate creates a payment quote (POST /payments/initiate). Nothing is paid
// until the quote is confirmed. The call carries an Idempotency-Key, so a
// retried call never creates a second payment; pass WithIdempotencyKey with a
// key derived from your own order to make that hold across process restarts.
func (s *PaymentsService) Initiate(ctx context.Context, params *PaymentInitiateParams, opts ...RequestOption) (*Payment, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	p := new(Payment)
	if _, err := s.client.do(ctx, opPaymentsInitiate, "", params, p, opts); err != nil {
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

// quoteWire is a quote as the service sends it (see the README's
// Assumptions): nested under "quote" in a payment.
type quoteWire struct {
	QuoteID      string     `json:"quote_id"`
	Amount       optDecimal `json:"amount"`
	Fee          optDecimal `json:"fee"`
	ExchangeRate optDecimal `json:"exchange_rate"`
	TotalAmount  optDecimal `json:"total_amount"`
	Currency     string     `json:"currency"`
	ExpiresAt    time.Time  `json:"expires_at"`
	CreatedAt    time.Time  `json:"created_at"`
}

// optDecimal is a decimal that remembers whether the JSON gave it: null and
// an absent member leave it unset. (A *decimal.Decimal would do, at the cost
// of an allocation per amount.)
type optDecimal struct {
	d   decimal.Decimal
	set bool
}

func (o *optDecimal) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optDecimal{}
		return nil
	}
	o.set = true
	return o.d.UnmarshalJSON(b)
}

// or returns o's value when it was given, else alt.
func (o *optDecimal) or(alt decimal.Decimal) decimal.Decimal {
	if o.set {
		return o.d
	}
	return alt
}

// paymentWire is what a payment's JSON decodes into, in one pass: the
// payment's own fields, its nested quote, and the quote's fields when they
// stand flat in the payment (the quote's amount, currency and creation time
// are then the payment's).
type paymentWire struct {
	*plainPayment
	Quote        *quoteWire `json:"quote"`
	QuoteID      string     `json:"quote_id"`
	Fee          optDecimal `json:"fee"`
	ExchangeRate optDecimal `json:"exchange_rate"`
	TotalAmount  optDecimal `json:"total_amount"`
	ExpiresAt    time.Time  `json:"expires_at"`
}

// plainPayment is Payment without its methods (its embedded APIResource
// included), a plain struct for encoding/json to fill.
type plainPayment Payment

// decoder returns the value p's JSON decodes into (see wired).
func (p *Payment) decoder() finisher {
	p.Quote = nil
	return &paymentWire{plainPayment: (*plainPayment)(p)}
}

// decodeData decodes a payment and its quote from the data of a response or
// an event, whether the quote is nested under "quote" (the documented shape)
// or its fields stand flat in the payment object. (encoding/json, used by a
// caller, reads only the documented shape.)
func (p *Payment) decodeData(b []byte) error {
	w := p.decoder()
	if err := json.Unmarshal(b, w); err != nil {
		return err
	}
	w.finish()
	return nil
}

// finish sets the payment's Quote from what was decoded.
func (w *paymentWire) finish() {
	p := (*Payment)(w.plainPayment)
	q := w.Quote
	if q == nil && w.QuoteID != "" {
		// Flat: the quote's creation time is the payment's, applied below.
		q = &quoteWire{QuoteID: w.QuoteID, Fee: w.Fee, ExchangeRate: w.ExchangeRate, TotalAmount: w.TotalAmount, ExpiresAt: w.ExpiresAt}
	}
	if q == nil || q.QuoteID == "" {
		p.Quote = nil
		return
	}
	p.Quote = q.quote(p)
}

func (w *quoteWire) quote(p *Payment) *Quote {
	q := &Quote{QuoteID: w.QuoteID, Currency: w.Currency, ExpiresAt: w.ExpiresAt,
		Fee: w.Fee.d, ExchangeRate: w.ExchangeRate.d, TotalAmount: w.TotalAmount.d}
	q.Amount = w.Amount.or(p.Amount)
	if q.Currency == "" {
		q.Currency = p.Currency
	}
	if q.ExpiresAt.IsZero() {
		switch {
		case !w.CreatedAt.IsZero():
			q.ExpiresAt = w.CreatedAt.Add(QuoteLifetime)
		case !p.CreatedAt.IsZero():
			q.ExpiresAt = p.CreatedAt.Add(QuoteLifetime)
		}
	}
	return q
}
