package paymentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// Quote pricing of the fake.
var (
	// feeRate is the fee: 1.5% of the amount, rounded half up to 2 decimal
	// places, and at least feeMinimum.
	feeRate    = decimal.RequireFromString("0.015")
	feeMinimum = decimal.RequireFromString("0.01")

	// unitsPerUSD is the built-in exchange-rate table: how many units of
	// each currency one US dollar buys. The rate from A to B is
	// unitsPerUSD[B] / unitsPerUSD[A], rounded to 6 decimal places.
	unitsPerUSD = map[string]decimal.Decimal{
		"USD": decimal.RequireFromString("1"),
		"EUR": decimal.RequireFromString("0.92"),
		"GBP": decimal.RequireFromString("0.79"),
		"CAD": decimal.RequireFromString("1.36"),
		"NGN": decimal.RequireFromString("1500"),
		"GHS": decimal.RequireFromString("15"),
		"KES": decimal.RequireFromString("130"),
		"ZAR": decimal.RequireFromString("18"),
		"UGX": decimal.RequireFromString("3700"),
	}
)

// quoteFee is the fee the fake charges on amount.
func quoteFee(amount decimal.Decimal) decimal.Decimal {
	fee := amount.Mul(feeRate).Round(2)
	if fee.LessThan(feeMinimum) {
		return feeMinimum
	}
	return fee
}

// exchangeRate is the rate from one currency to another: 1 for the same
// currency, else a withExchangeRate override, else the built-in table.
func (s *Server) exchangeRate(from, to string) (decimal.Decimal, bool) {
	if from == to {
		return decimal.NewFromInt(1), true
	}
	if r, ok := s.rates[[2]string{from, to}]; ok {
		return r, true
	}
	f, okF := unitsPerUSD[from]
	t, okT := unitsPerUSD[to]
	if !okF || !okT {
		return decimal.Decimal{}, false
	}
	return t.DivRound(f, 6), true
}

type quoteJSON struct {
	QuoteID      string `json:"quote_id"`
	Amount       string `json:"amount"`
	Fee          string `json:"fee"`
	ExchangeRate string `json:"exchange_rate"`
	TotalAmount  string `json:"total_amount"`
	Currency     string `json:"currency"`
	CreatedAt    string `json:"created_at"`
	ExpiresAt    string `json:"expires_at"`
}

type paymentJSON struct {
	ID              string     `json:"id"`
	Reference       string     `json:"reference"`
	Status          string     `json:"status"`
	Amount          string     `json:"amount"`
	Currency        string     `json:"currency"`
	Description     string     `json:"description"`
	Type            string     `json:"type"`
	SubType         string     `json:"sub_type"`
	Category        string     `json:"category"`
	TransactionDate string     `json:"transaction_date"`
	Tags            string     `json:"tags"`
	IsReversed      bool       `json:"is_reversed"`
	IsCompleted     bool       `json:"is_completed"`
	Channel         string     `json:"channel"`
	Notes           string     `json:"notes"`
	RecipientID     string     `json:"recipient_id"`
	CreatedAt       string     `json:"created_at"`
	UpdatedAt       string     `json:"updated_at"`
	Quote           *quoteJSON `json:"quote"`
}

func (p *payment) json() paymentJSON {
	q := p.Quote
	return paymentJSON{
		ID: p.ID, Reference: p.Reference, Status: string(p.Status), Amount: money(p.Amount), Currency: p.Currency,
		Description: p.Description, Type: p.Type, SubType: p.SubType, Category: p.Category,
		TransactionDate: stamp(p.TransactionDate), Tags: p.Tags, IsReversed: p.IsReversed, IsCompleted: p.IsCompleted,
		Channel: p.Channel, Notes: p.Notes, RecipientID: p.RecipientID,
		CreatedAt: stamp(p.CreatedAt), UpdatedAt: stamp(p.UpdatedAt),
		Quote: &quoteJSON{
			QuoteID: q.ID, Amount: money(q.Amount), Fee: money(q.Fee), ExchangeRate: q.ExchangeRate.String(),
			TotalAmount: money(q.TotalAmount), Currency: q.Currency,
			CreatedAt: stamp(q.CreatedAt), ExpiresAt: stamp(q.ExpiresAt),
		},
	}
}

// initiatePayment is POST /payments/initiate: it creates a pending payment
// and its quote.
func (s *Server) initiatePayment(rq *apiRequest) *response {
	var p problems
	o, err := parseObject(rq.body, &p, &rq.notes)
	if err != nil {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}
	pay := &payment{Status: payments.PaymentStatusPending}
	amount, hasAmount := o.amount("amount")
	if !o.present("amount") {
		p.add("amount", "is required")
	}
	pay.Amount = amount
	pay.Currency = o.required("currency", maxCodeLen)
	p.currency("currency", pay.Currency)
	pay.RecipientID = o.required("recipient_id", maxNameLen)
	p.uuid("recipient_id", pay.RecipientID)
	pay.Reference = o.required("reference", maxNameLen)
	if strings.HasPrefix(pay.Reference, triggeredPrefix) {
		// Reserved, so that the prefix always means a test event.
		p.add("reference", "must not start with %q, which marks the test events of POST /webhooks/events/trigger",
			triggeredPrefix)
	}
	pay.Description = o.text("description", maxTextLen)
	pay.Type = o.text("transaction_type", maxCodeLen)
	pay.Category = o.text("transaction_category", maxCodeLen)
	pay.Tags = o.text("transaction_tags", maxTextLen)
	pay.Notes = o.text("transaction_notes", maxTextLen)
	pay.Channel = o.text("channel", maxCodeLen)
	pay.SubType = o.text("sub_type", maxCodeLen)
	if len(p) > 0 || !hasAmount {
		return s.invalid(p)
	}
	if pay.Type == "" {
		pay.Type = "transfer"
	}
	if pay.Channel == "" {
		pay.Channel = "api"
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rcpt, ok := s.st.recipientByID[pay.RecipientID]
	if !ok {
		return s.notFound("recipient " + pay.RecipientID)
	}
	if bad := s.unverified(rcpt); bad != nil {
		return bad
	}
	rate, ok := s.exchangeRate(pay.Currency, rcpt.AccountCurrency)
	if !ok {
		p.add("currency", "the sandbox has no exchange rate from %s to the recipient's %s (see paymentstest.WithExchangeRate)",
			pay.Currency, rcpt.AccountCurrency)
		return s.invalid(p)
	}
	now := s.clock.now()
	for _, other := range s.st.payments {
		lapsed := !other.executed() && !now.Before(other.Quote.ExpiresAt)
		if other.Reference == pay.Reference && !lapsed {
			return s.fail(http.StatusUnprocessableEntity, payments.CodeDuplicateReference,
				fmt.Sprintf("reference %q is already used by payment %s", pay.Reference, other.ID),
				fieldProblem{Field: "reference", Message: "is already used by another payment"})
		}
	}
	pay.ID, pay.CreatedAt, pay.UpdatedAt, pay.TransactionDate = s.ids.uuid(), now, now, now
	fee := quoteFee(pay.Amount)
	pay.Quote = quote{
		ID: s.ids.uuid(), Amount: pay.Amount, Fee: fee, ExchangeRate: rate,
		TotalAmount: pay.Amount.Add(fee), Currency: pay.Currency,
		CreatedAt: now, ExpiresAt: now.Add(payments.QuoteLifetime),
	}
	data, err := json.Marshal(pay.json())
	if err != nil {
		return s.internal(err)
	}
	s.st.payments = append(s.st.payments, pay)
	s.st.paymentByID[pay.ID] = pay
	s.st.paymentByQuote[pay.Quote.ID] = pay
	s.emit(payments.EventPaymentInitiated, data)
	return s.ok(http.StatusOK, "Payment initiated: confirm the quote before it expires", data)
}

// confirmPayment is POST /payments/confirm: it executes a quoted payment.
// The payment completes, or is rejected when its amount (in the recipient's
// currency) exceeds the recipient's limit; the test amounts choose other
// outcomes (testvalues.go). A payment that will be paid out draws its total
// from the balance, and is refused when the balance is short.
func (s *Server) confirmPayment(rq *apiRequest) *response {
	var p problems
	o, err := parseObject(rq.body, &p, &rq.notes)
	if err != nil {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}
	reference := o.required("reference", maxNameLen)
	quoteID := o.required("quote_id", maxNameLen)
	if len(p) > 0 {
		return s.invalid(p)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	pay, ok := s.st.paymentByQuote[quoteID]
	if !ok {
		return s.notFound("quote " + quoteID)
	}
	if pay.Reference != reference {
		return s.invalid(problems{{Field: "reference", Message: "does not match the reference of the quote's payment"}})
	}
	if pay.executed() {
		return s.fail(http.StatusUnprocessableEntity, payments.CodeQuoteAlreadyConfirmed,
			fmt.Sprintf("quote %s was already confirmed: payment %s is %s", quoteID, pay.ID, pay.Status))
	}
	now := s.clock.now()
	if !now.Before(pay.Quote.ExpiresAt) {
		return s.fail(http.StatusUnprocessableEntity, payments.CodeQuoteExpired,
			fmt.Sprintf("quote %s expired at %s; initiate the payment again", quoteID, stamp(pay.Quote.ExpiresAt)))
	}
	next := *pay
	next.UpdatedAt, next.TransactionDate, next.Confirmed = now, now, true
	var event payments.EventType
	var message string
	outcome := outcomeOf(pay.Amount)
	rcpt := s.st.recipientByID[pay.RecipientID]
	if rcpt != nil && rcpt.Limit != nil && pay.Amount.Mul(pay.Quote.ExchangeRate).GreaterThan(*rcpt.Limit) {
		outcome = rejected
	}
	switch outcome {
	case rejected:
		next.Status, event = payments.PaymentStatusRejected, payments.EventPaymentRejected
		message = "Payment rejected: the amount exceeds the recipient's limit"
		if outcomeOf(pay.Amount) == rejected {
			message = "Payment rejected (test amount paymentstest.AmountRejected)"
		}
	case fails:
		next.Status, event = payments.PaymentStatusFailed, payments.EventPaymentFailed
		message = "Payment failed: the receiving bank declined the transfer (test amount paymentstest.AmountFails)"
	case completesLate:
		message = "Payment confirmed and processing: payment.completed follows (test amount paymentstest.AmountCompletesLate)"
	default:
		next.Status, next.IsCompleted = payments.PaymentStatusCompleted, true
		event, message = payments.EventPaymentCompleted, "Payment completed"
	}
	paidOut := outcome == completes || outcome == completesLate
	if paidOut {
		if short := s.shortOf(pay); short != nil {
			return short
		}
	}
	data, err := json.Marshal(next.json())
	if err != nil {
		return s.internal(err)
	}
	*pay = next
	if event != "" {
		s.emit(event, data)
	}
	if paidOut {
		s.debit(pay.Currency, pay.Quote.TotalAmount)
	}
	if outcome == completesLate {
		s.later.after(s.delay, func() { s.completeLate(pay) })
	}
	return s.ok(http.StatusOK, message, data)
}

// completeLate completes a payment of AmountCompletesLate once the
// processing delay has passed.
func (s *Server) completeLate(pay *payment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pay.Status != payments.PaymentStatusPending { // SettlePayment ended it first
		return
	}
	s.settle(pay, payments.PaymentStatusCompleted, payments.EventPaymentCompleted)
}
