package payments_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestRefusalRecoveryTable proves the table "After a refusal: which key
// changes" (docs/retries.md) and the hints of CodeInsufficientBalance and
// CodeQuoteExpired, row by row, against the fake.
func TestRefusalRecoveryTable(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, balance string) (*paymentstest.Server, *payments.Client, string) {
		srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.RequireFromString(balance)))
		t.Cleanup(srv.Close)
		c := srv.Client()
		rcpt, err := c.Recipients.Create(ctx, validRecipientParams())
		require.NoError(t, err)
		return srv, c, rcpt.ID
	}
	initiate := func(c *payments.Client, rcpt, key string) (*payments.Payment, error) {
		return c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount: payments.Amount{Decimal: decimal.RequireFromString("4990")}, Currency: "NGN", RecipientID: rcpt, Reference: "order-9",
		}, payments.WithIdempotencyKey(key))
	}
	confirm := func(c *payments.Client, p *payments.Payment, key string) error {
		_, err := c.Payments.Confirm(ctx, p.ConfirmParams(), payments.WithIdempotencyKey(key))
		return err
	}

	t.Run("insufficient_balance: only the confirm key changes", func(t *testing.T) {
		srv, c, rcpt := start(t, "5000")
		p, err := initiate(c, rcpt, "order-9-initiate")
		require.NoError(t, err)
		require.ErrorIs(t, confirm(c, p, "order-9-confirm"), payments.CodeInsufficientBalance)

		_, err = initiate(c, rcpt, "order-9-initiate-2")
		assert.ErrorIs(t, err, payments.CodeDuplicateReference, "the live quote owns the reference: a new initiate key is refused")

		va, err := c.VirtualAccounts.Create(ctx, benchVirtualAccountParams())
		require.NoError(t, err)
		_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("100000"), "NGN")
		require.NoError(t, err)
		require.NoError(t, confirm(c, p, "order-9-confirm-2"), "funded: the same quote confirms with a new confirm key")
	})

	t.Run("quote_expired: both keys change, the reference is free", func(t *testing.T) {
		srv, c, rcpt := start(t, "100000")
		p, err := initiate(c, rcpt, "order-9-initiate")
		require.NoError(t, err)
		srv.Advance(6 * time.Minute)
		require.ErrorIs(t, confirm(c, p, "order-9-confirm"), payments.CodeQuoteExpired)

		again, err := initiate(c, rcpt, "order-9-initiate-2")
		require.NoError(t, err, "the same reference is accepted again with a new initiate key")
		assert.NotEqual(t, p.Quote.QuoteID, again.Quote.QuoteID, "a new quote")
		require.NoError(t, confirm(c, again, "order-9-confirm-2"))
	})
}
