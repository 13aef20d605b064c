package payments

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// This file decodes a payment and its quote as the service sends them (see
// docs/assumptions.md, "Quote in the initiate response"), and holds the rule
// that no amount is ever a default: an amount the response does not give is
// an error, never a zero.

// quoteWire is a quote as the service sends it: nested under "quote" in a
// payment.
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
// an absent member leave it unset (shopspring/decimal alone decodes null to
// zero without an error). (A *decimal.Decimal would do, at the cost of an
// allocation per amount.)
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

// paymentWire is what a payment's JSON decodes into, in one pass: the
// payment's own fields, its nested quote, and the quote's fields when they
// stand flat in the payment (the quote's amount, currency and creation time
// are then the payment's). Amount shadows the payment's own, so that an
// absent or null amount is told from a zero. The payment's fields are a
// copy, stored into the payment by finish: encoding/json reached them
// through an embedded pointer, field by field, 0.2-0.3 µs more per payment
// (BENCHMARKS.md, "Time per call, second round").
type paymentWire struct {
	plainPayment
	Amount       optDecimal `json:"amount"`
	Quote        *quoteWire `json:"quote"`
	QuoteID      string     `json:"quote_id"`
	Fee          optDecimal `json:"fee"`
	ExchangeRate optDecimal `json:"exchange_rate"`
	TotalAmount  optDecimal `json:"total_amount"`
	ExpiresAt    time.Time  `json:"expires_at"`

	// into is the payment decoded (see decoder).
	into *Payment
}

// plainPayment is Payment without its methods (its embedded APIResource
// included), a plain struct for encoding/json to fill.
type plainPayment Payment

// decoder returns the value p's JSON decodes into (see wired), in s, the
// call's scratch: no allocation of its own.
func (p *Payment) decoder(s *decodeScratch) finisher { return p.wire(&s.payment) }

// wire makes w the value p's JSON decodes into: it starts from p's fields,
// as decoding into p itself would, and its finish stores them into p.
func (p *Payment) wire(w *paymentWire) *paymentWire {
	p.Quote = nil
	*w = paymentWire{plainPayment: plainPayment(*p), into: p}
	return w
}

// paymentWires holds the values that payments decoded outside a call (an
// event's) decode into: the decoded payment holds nothing of one, so it is
// emptied and reused, not allocated per payment.
var paymentWires = sync.Pool{New: func() any { return new(paymentWire) }}

// decodeData decodes a payment and its quote from the data of a response or
// an event, whether the quote is nested under "quote" (the documented shape)
// or its fields stand flat in the payment object. (encoding/json, used by a
// caller, reads only the documented shape.) A payment without an amount is
// an error; a quote that cannot be read whole leaves Quote nil.
func (p *Payment) decodeData(b []byte) error {
	w := paymentWires.Get().(*paymentWire)
	defer func() {
		*w = paymentWire{}
		paymentWires.Put(w)
	}()
	if err := json.Unmarshal(b, p.wire(w)); err != nil {
		return err
	}
	if reason := w.finish(false); reason != "" {
		return errorString(reason)
	}
	return nil
}

// errorString is an error whose text is a reason of this file.
type errorString string

func (e errorString) Error() string { return string(e) }

// finish stores the decoded fields into the payment, sets its Amount and
// Quote from what was decoded, and returns what makes the payment unusable
// ("" when nothing): an amount that is absent or null, and, when needQuote
// is set (Initiate), a quote that is absent or cannot be read whole. Without needQuote such a quote leaves
// Quote nil: a Quote never holds an amount the service did not send.
func (w *paymentWire) finish(needQuote bool) string {
	p := w.into
	*p = Payment(w.plainPayment)
	p.Amount, p.Quote = w.Amount.d, nil
	if !w.Amount.set {
		return "data has no amount (data.amount is absent or null): the SDK never takes a zero for it"
	}
	q, where := w.Quote, "data.quote."
	if q == nil {
		if w.QuoteID == "" && !w.Fee.set && !w.ExchangeRate.set && !w.TotalAmount.set {
			if needQuote {
				return "the initiate response carries no quote (no quote id: looked for data.quote.quote_id and data.quote_id); " + quoteAdvice
			}
			return ""
		}
		// Flat: the quote's creation time is the payment's, applied below.
		q, where = &quoteWire{QuoteID: w.QuoteID, Fee: w.Fee, ExchangeRate: w.ExchangeRate, TotalAmount: w.TotalAmount, ExpiresAt: w.ExpiresAt}, "data."
	}
	quote, reason := q.quote(p, w, where)
	if reason != "" {
		if needQuote {
			return "the initiate response's quote cannot be read: " + reason + "; " + quoteAdvice
		}
		return ""
	}
	p.Quote = quote
	return ""
}

// quoteAdvice ends the reason of a quote that cannot be read.
const quoteAdvice = "nothing is paid until Confirm, so do not confirm it. The SDK reads only the names of docs/assumptions.md " +
	"(the body is in the error's Response.Body); if the service names them otherwise, initiate with client.Do and read the quote yourself"

// quote builds the quote from w, with the payment's amount and currency
// where the quote gives none, or says what it lacks (each member with where
// it was looked for, under where: "data.quote." or "data.").
func (w *quoteWire) quote(p *Payment, pw *paymentWire, where string) (*Quote, string) {
	var lacks, bad []string
	need := func(name string, ok bool, also string) {
		if !ok {
			at := where + name
			if also != "" && also != at {
				at += " or " + also
			}
			lacks = append(lacks, name+" ("+at+")")
		}
	}
	amount, currency := w.Amount, w.Currency
	if !amount.set {
		amount = pw.Amount
	}
	if currency == "" {
		currency = p.Currency
	}
	need("quote_id", w.QuoteID != "", "")
	need("amount", amount.set, "data.amount")
	need("fee", w.Fee.set, "")
	need("exchange_rate", w.ExchangeRate.set, "")
	need("total_amount", w.TotalAmount.set, "")
	need("currency", currency != "", "data.currency")
	// A rate or a total of zero is never a price: the service sent no
	// usable one.
	if w.ExchangeRate.set && w.ExchangeRate.d.Sign() <= 0 {
		bad = append(bad, "exchange_rate ("+where+"exchange_rate) is "+w.ExchangeRate.d.String()+", not a rate")
	}
	if w.TotalAmount.set && w.TotalAmount.d.Sign() <= 0 {
		bad = append(bad, "total_amount ("+where+"total_amount) is "+w.TotalAmount.d.String()+", not an amount to collect")
	}
	if len(lacks) > 0 || len(bad) > 0 {
		var parts []string
		if len(lacks) > 0 {
			parts = append(parts, "it has no "+strings.Join(lacks, ", no "))
		}
		return nil, strings.Join(append(parts, bad...), "; ")
	}
	q := &Quote{QuoteID: w.QuoteID, Amount: amount.d, Currency: currency, ExpiresAt: w.ExpiresAt,
		Fee: w.Fee.d, ExchangeRate: w.ExchangeRate.d, TotalAmount: w.TotalAmount.d}
	if q.ExpiresAt.IsZero() {
		switch {
		case !w.CreatedAt.IsZero():
			q.ExpiresAt = w.CreatedAt.Add(QuoteLifetime)
		case !p.CreatedAt.IsZero():
			q.ExpiresAt = p.CreatedAt.Add(QuoteLifetime)
		}
	}
	return q, ""
}

// agrees returns why the initiated payment p disagrees with the params that
// asked for it ("" when it agrees): its amount, or its quote's, is not the
// amount sent, or its currency, or its quote's, is not the currency sent.
// Amounts are compared by value (100 and 100.00 agree), currencies without
// regard to case. Every amount is named in full: amounts are never masked.
func (params *PaymentInitiateParams) agrees(p *Payment) string {
	var diffs []string
	check := func(whose, at string, amount decimal.Decimal, currency string) {
		if !amount.Equal(params.Amount.Decimal) {
			diffs = append(diffs, whose+" amount ("+at+".amount) is "+amount.String()+scaleHint(amount, params.Amount.Decimal))
		}
		if !strings.EqualFold(currency, params.Currency) {
			diffs = append(diffs, whose+" currency ("+at+".currency) is "+currencyText(currency))
		}
	}
	check("the payment's", "data", p.Amount, p.Currency)
	if q := p.Quote; q != nil {
		check("the quote's", "data.quote", q.Amount, q.Currency)
	}
	if len(diffs) == 0 {
		return ""
	}
	return "the answer disagrees with the " + params.Amount.String() + " " + params.Currency + " sent: " + strings.Join(diffs, "; ") +
		". Nothing is paid until Confirm: do not confirm this quote, and find out how the service counts amounts " +
		"(the answer is in the error's Response.Body)"
}

var hundred = decimal.NewFromInt(100)

// scaleHint names a factor of 100 between got and sent: a service counting
// in minor units (cents, kobo).
func scaleHint(got, sent decimal.Decimal) string {
	switch {
	case got.Equal(sent.Mul(hundred)):
		return " (100 times the amount sent: the service may count in minor units)"
	case sent.Equal(got.Mul(hundred)):
		return " (a hundredth of the amount sent: the service may count in major units where minor ones were meant)"
	}
	return ""
}

func currencyText(c string) string {
	if c == "" {
		return "empty"
	}
	return c
}

// amountsOf lists the amounts a reason of agrees names, so that the
// error's masking of long digit runs leaves them whole.
func (params *PaymentInitiateParams) amountsOf(p *Payment) []string {
	keep := []string{params.Amount.String(), p.Amount.String()}
	if p.Quote != nil {
		keep = append(keep, p.Quote.Amount.String())
	}
	return keep
}
