// Package benchbaseline holds the types a hand-written client of the
// Payments API would declare, with decimal amounts: the baseline that the
// SDK's benchmarks (the root package's and the webhook package's) decode
// into, so that both compare with the same floor.
package benchbaseline

import (
	"time"

	"github.com/shopspring/decimal"
)

// Quote is a quote as a hand-written client declares it.
type Quote struct {
	ID           string          `json:"quote_id"`
	Amount       decimal.Decimal `json:"amount"`
	Fee          decimal.Decimal `json:"fee"`
	ExchangeRate decimal.Decimal `json:"exchange_rate"`
	TotalAmount  decimal.Decimal `json:"total_amount"`
	Currency     string          `json:"currency"`
	ExpiresAt    time.Time       `json:"expires_at"`
}

// Payment is a payment as a hand-written client declares it, with its
// quote.
type Payment struct {
	ID              string          `json:"id"`
	Reference       string          `json:"reference"`
	Status          string          `json:"status"`
	Amount          decimal.Decimal `json:"amount"`
	Currency        string          `json:"currency"`
	Description     string          `json:"description"`
	Type            string          `json:"type"`
	SubType         string          `json:"sub_type"`
	Category        string          `json:"category"`
	TransactionDate time.Time       `json:"transaction_date"`
	Tags            string          `json:"tags"`
	IsReversed      bool            `json:"is_reversed"`
	IsCompleted     bool            `json:"is_completed"`
	Channel         string          `json:"channel"`
	Notes           string          `json:"notes"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	Quote           *Quote          `json:"quote,omitempty"`
}
