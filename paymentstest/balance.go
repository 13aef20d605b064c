package paymentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// The merchant's balance: one per currency, each starting at the same
// amount. Confirmed payments draw it down; payments into virtual accounts
// fill it up, as the specification has them "credited automatically to the
// merchant's main account".
const (
	// defaultBalance is what the merchant holds in each currency when the
	// server starts, unless WithBalance says otherwise: more than any test
	// that does not mean to run out will pay.
	defaultBalance = "1000000000000.00"
	// defaultBalanceLowThreshold is the balance below which
	// account.balance_low is sent, unless withBalanceLowThreshold says
	// otherwise.
	defaultBalanceLowThreshold = "10000.00"
)

// WithBalance sets what the merchant holds in each currency when the server
// starts (default 1000000000000.00). Confirming a payment draws its quote's
// total_amount (amount plus fee) from the balance in the payment's
// currency, and is refused with 422 "insufficient_balance" when that
// balance is short; nothing is drawn for a payment that fails or is
// rejected. SimulateIncomingPayment adds to the balance in its currency.
// Balance reads it. The amount must not be negative.
func WithBalance(amount decimal.Decimal) Option {
	return func(c *config) {
		if c.nonNegative("WithBalance", amount) {
			c.balance = amount
		}
	}
}

// withBalanceLowThreshold sets the balance below which account.balance_low
// is sent (default defaultBalanceLowThreshold; zero: never). The event goes
// once, when a confirmed payment leaves a currency's balance below the
// threshold; it goes again only after an incoming payment has brought the
// balance back to the threshold or above. Its data is {"merchant_id",
// "currency", "balance", "threshold", "created_at"}. The amount must not
// be negative.
func withBalanceLowThreshold(amount decimal.Decimal) Option {
	return func(c *config) {
		if c.nonNegative("WithSandbox: BalanceLowThreshold", amount) {
			c.balanceLow = amount
		}
	}
}

// nonNegative reports whether the amount given to option is not negative,
// and records the error otherwise.
func (c *config) nonNegative(option string, amount decimal.Decimal) bool {
	if amount.IsNegative() {
		c.fail("%s(%s) is negative", option, amount)
		return false
	}
	return true
}

// balances is the merchant's money. Server.mu guards it.
type balances struct {
	start, threshold decimal.Decimal
	held             map[string]decimal.Decimal // by currency; absent: start
	alerted          map[string]bool            // account.balance_low sent, not yet re-armed
}

func (b *balances) of(currency string) decimal.Decimal {
	if v, ok := b.held[currency]; ok {
		return v
	}
	return b.start
}

func (b *balances) set(currency string, v decimal.Decimal) {
	if b.held == nil {
		b.held = make(map[string]decimal.Decimal)
		b.alerted = make(map[string]bool)
	}
	b.held[currency] = v
}

// Balance returns what the merchant holds in currency: the starting
// balance (WithBalance), less the payments confirmed in that currency,
// plus the payments received into virtual accounts in it.
func (s *Server) Balance(currency string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.money.of(strings.ToUpper(currency))
}

type balanceLowJSON struct {
	MerchantID string `json:"merchant_id"`
	Currency   string `json:"currency"`
	Balance    string `json:"balance"`
	Threshold  string `json:"threshold"`
	CreatedAt  string `json:"created_at"`
}

// shortOf returns the refusal of a payment whose total the balance cannot
// cover, or nil. s.mu must be held.
func (s *Server) shortOf(pay *payment) *response {
	have := s.st.money.of(pay.Currency)
	if !have.LessThan(pay.Quote.TotalAmount) {
		return nil
	}
	return s.fail(http.StatusUnprocessableEntity, payments.CodeInsufficientBalance,
		fmt.Sprintf("the %s balance (%s) is less than the quote's total_amount (%s): fund the account, "+
			"for example by a payment into a virtual account, and confirm again with a new idempotency key before the quote expires (the same key replays this refusal)",
			pay.Currency, money(have), money(pay.Quote.TotalAmount)))
}

// debit draws amount from the balance in currency, which must cover it, and
// sends account.balance_low when the balance falls below the threshold.
// s.mu must be held.
func (s *Server) debit(currency string, amount decimal.Decimal) {
	b := &s.st.money
	left := b.of(currency).Sub(amount)
	b.set(currency, left)
	if !left.LessThan(b.threshold) || b.alerted[currency] {
		return
	}
	b.alerted[currency] = true
	now := s.clock.now()
	data, _ := json.Marshal(balanceLowJSON{ // strings only: cannot fail
		MerchantID: s.merchantID, Currency: currency, Balance: money(left),
		Threshold: money(b.threshold), CreatedAt: stamp(now),
	})
	s.emit(payments.EventAccountBalanceLow, data)
}

// credit adds amount to the balance in currency, re-arming
// account.balance_low once the balance is back at the threshold. s.mu must
// be held.
func (s *Server) credit(currency string, amount decimal.Decimal) {
	b := &s.st.money
	now := b.of(currency).Add(amount)
	b.set(currency, now)
	if !now.LessThan(b.threshold) {
		b.alerted[currency] = false
	}
}
