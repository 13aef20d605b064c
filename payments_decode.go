package payments

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// quoteWire is every shape of quote the SDK accepts: the documented nested
// object and the common aliases seen in payment APIs.
type quoteWire struct {
	QuoteID         string     `json:"quote_id"`
	ID              string     `json:"id"`
	Amount          optDecimal `json:"amount"`
	Fee             optDecimal `json:"fee"`
	Fees            optDecimal `json:"fees"`
	ExchangeRate    optDecimal `json:"exchange_rate"`
	Rate            optDecimal `json:"rate"`
	TotalAmount     optDecimal `json:"total_amount"`
	AmountToCollect optDecimal `json:"amount_to_collect"`
	Currency        string     `json:"currency"`
	ExpiresAt       time.Time  `json:"expires_at"`
	CreatedAt       time.Time  `json:"created_at"`
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

var quoteIDKey = []byte(`"quote_id"`)

// paymentWire is what a payment's JSON decodes into: the payment's own
// fields and, in the same pass, its nested quote.
type paymentWire struct {
	*plainPayment
	Quote *quoteWire `json:"quote"`
}

// plainPayment is Payment without its methods, so that decoding it does not
// call Payment.UnmarshalJSON.
type plainPayment Payment

// UnmarshalJSON decodes a payment and its quote, whether the quote is nested
// under "quote" (the documented shape) or its fields stand flat in the
// payment object.
func (p *Payment) UnmarshalJSON(b []byte) error {
	wire := &paymentWire{plainPayment: (*plainPayment)(p)}
	if err := json.Unmarshal(b, wire); err != nil {
		return err
	}
	p.Quote = nil
	w := wire.Quote
	switch {
	case w != nil:
		if w.QuoteID == "" {
			w.QuoteID = w.ID
		}
	case bytes.Contains(b, quoteIDKey):
		w = new(quoteWire)
		if err := json.Unmarshal(b, w); err != nil {
			return err
		}
		w.CreatedAt = time.Time{} // the payment's own creation time, applied below
	default:
		return nil
	}
	if w.QuoteID == "" {
		return nil
	}
	p.Quote = w.quote(p)
	return nil
}

func (w *quoteWire) quote(p *Payment) *Quote {
	q := &Quote{ID: w.QuoteID, Currency: w.Currency, ExpiresAt: w.ExpiresAt}
	q.Amount = w.Amount.or(p.Amount)
	q.Fee = w.Fee.or(w.Fees.d)
	q.ExchangeRate = w.ExchangeRate.or(w.Rate.d)
	q.TotalAmount = w.TotalAmount.or(w.AmountToCollect.d)
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
