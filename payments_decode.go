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
	QuoteID         string           `json:"quote_id"`
	ID              string           `json:"id"`
	Amount          *decimal.Decimal `json:"amount"`
	Fee             *decimal.Decimal `json:"fee"`
	Fees            *decimal.Decimal `json:"fees"`
	ExchangeRate    *decimal.Decimal `json:"exchange_rate"`
	Rate            *decimal.Decimal `json:"rate"`
	TotalAmount     *decimal.Decimal `json:"total_amount"`
	AmountToCollect *decimal.Decimal `json:"amount_to_collect"`
	Currency        string           `json:"currency"`
	ExpiresAt       time.Time        `json:"expires_at"`
	CreatedAt       time.Time        `json:"created_at"`
}

var quoteIDKey = []byte(`"quote_id"`)

// UnmarshalJSON decodes a payment and its quote, whether the quote is nested
// under "quote" (the documented shape) or its fields stand flat in the
// payment object.
func (p *Payment) UnmarshalJSON(b []byte) error {
	type plain Payment
	aux := struct {
		*plain
		Quote json.RawMessage `json:"quote"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	p.Quote = nil
	var (
		w      quoteWire
		nested = len(aux.Quote) > 0 && !bytes.Equal(aux.Quote, []byte("null"))
	)
	switch {
	case nested:
		if err := json.Unmarshal(aux.Quote, &w); err != nil {
			return err
		}
		if w.QuoteID == "" {
			w.QuoteID = w.ID
		}
	case bytes.Contains(b, quoteIDKey):
		if err := json.Unmarshal(b, &w); err != nil {
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
	q.Amount = firstDecimal(w.Amount, &p.Amount)
	q.Fee = firstDecimal(w.Fee, w.Fees)
	q.ExchangeRate = firstDecimal(w.ExchangeRate, w.Rate)
	q.TotalAmount = firstDecimal(w.TotalAmount, w.AmountToCollect)
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

func firstDecimal(ds ...*decimal.Decimal) decimal.Decimal {
	for _, d := range ds {
		if d != nil {
			return *d
		}
	}
	return decimal.Decimal{}
}
