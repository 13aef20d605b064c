package paymentstest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestInitiateQuotes(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, c := start(t, paymentstest.WithClock(func() time.Time { return fixed }))
	r := createRecipient(t, c, "")
	p, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec("1000")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-1",
		Description: "Invoice 1", TransactionTags: "a,b", Channel: "web", SubType: "p2p",
	})
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusPending, p.Status)
	assert.False(t, p.IsCompleted)
	assert.True(t, p.Amount.Equal(dec("1000")))
	assert.Equal(t, "order-1", p.Reference)
	assert.Equal(t, "a,b", p.Tags)
	assert.Equal(t, "web", p.Channel)
	assert.Equal(t, "transfer", p.Type, "the default type")
	assert.Equal(t, fixed, p.CreatedAt)
	assert.NotEmpty(t, p.LastResponse().IdempotencyKey)

	q := p.Quote
	require.NotNil(t, q)
	require.NoError(t, uuid.Validate(q.QuoteID))
	assert.True(t, q.Fee.Equal(dec("15.00")), "1.5%% fee: %s", q.Fee)
	assert.True(t, q.TotalAmount.Equal(dec("1015")), "total: %s", q.TotalAmount)
	assert.True(t, q.ExchangeRate.Equal(dec("1")))
	assert.Equal(t, "NGN", q.Currency)
	assert.Equal(t, fixed.Add(5*time.Minute), q.ExpiresAt)
	assert.Contains(t, string(p.RawJSON()), `"fee":"15.00"`, "amounts are strings on output")

	stored := srv.PaymentsByReference("order-1")
	require.Len(t, stored, 1)
	assert.Equal(t, p.ID, stored[0].ID)
	assert.Equal(t, q.QuoteID, stored[0].Quote.QuoteID)
	got, ok := srv.Payment(p.ID)
	require.True(t, ok)
	assert.Equal(t, "Invoice 1", got.Description)
	assert.Len(t, srv.Payments(), 1)
}

func TestFeeRule(t *testing.T) {
	_, c := start(t)
	r := createRecipient(t, c, "")
	for amount, fee := range map[string]string{
		"0.01":      "0.01", // the minimum
		"0.5":       "0.01",
		"1":         "0.02", // 0.015 rounds half up
		"333.33":    "5.00", // 4.99995
		"1234.5678": "18.52",
	} {
		p := initiate(t, c, r.ID, amount, "fee-"+amount)
		assert.True(t, p.Quote.Fee.Equal(dec(fee)), "fee on %s: %s", amount, p.Quote.Fee)
		assert.True(t, p.Quote.TotalAmount.Equal(dec(amount).Add(dec(fee))), "total on %s", amount)
		assert.True(t, p.Amount.Equal(dec(amount)), "exact digits kept for %s: %s", amount, p.Amount)
	}
}

func TestExchangeRates(t *testing.T) {
	_, c := start(t, paymentstest.WithExchangeRate("NGN", "GBP", dec("0.0005")))
	usd := recipientParams()
	usd.AccountCurrency = "USD"
	r, err := c.Recipients.Create(ctx(t), usd)
	require.NoError(t, err)
	p := initiate(t, c, r.ID, "1500", "fx-1")
	assert.True(t, p.Quote.ExchangeRate.Equal(dec("0.000667")), "NGN→USD from the table: %s", p.Quote.ExchangeRate)
	assert.Equal(t, "NGN", p.Quote.Currency)

	gbp := recipientParams()
	gbp.AccountCurrency = "GBP"
	r2, err := c.Recipients.Create(ctx(t), gbp)
	require.NoError(t, err)
	p = initiate(t, c, r2.ID, "1500", "fx-2")
	assert.True(t, p.Quote.ExchangeRate.Equal(dec("0.0005")), "override: %s", p.Quote.ExchangeRate)

	xyz := recipientParams()
	xyz.AccountCurrency = "XYZ"
	r3, err := c.Recipients.Create(ctx(t), xyz)
	require.NoError(t, err)
	_, err = c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("1")}, Currency: "NGN", RecipientID: r3.ID, Reference: "fx-3"})
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	require.Len(t, apiErr.Errors, 1)
	assert.Equal(t, "currency", apiErr.Errors[0].Field)
}

func TestInitiateValidation(t *testing.T) {
	srv, c := start(t)
	res := send(t, srv, http.MethodPost, "/payments/initiate", `{}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.ElementsMatch(t, []string{"amount", "currency", "recipient_id", "reference"}, res.fields())

	res = send(t, srv, http.MethodPost, "/payments/initiate",
		`{"amount":0,"currency":"NGN","recipient_id":"x","reference":"r","description":5}`, nil)
	assert.ElementsMatch(t, []string{"amount", "recipient_id", "description"}, res.fields())

	for _, amount := range []string{`-1`, `1e18`, `1e1000000000`, `0.0000000000000000001`, `"ten"`, `true`} {
		res = send(t, srv, http.MethodPost, "/payments/initiate",
			`{"amount":`+amount+`,"currency":"NGN","recipient_id":"`+uuid.NewString()+`","reference":"r"}`, nil)
		assert.Equal(t, []string{"amount"}, res.fields(), amount)
	}

	_, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec("10")}, Currency: "NGN", RecipientID: uuid.NewString(), Reference: "r",
	})
	require.ErrorIs(t, err, payments.ErrNotFound, "an unknown recipient")
	assert.Empty(t, srv.Payments())
}

func TestDuplicateReference(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	first := initiate(t, c, r.ID, "10", "order-9")
	_, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("10")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-9"})
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	assert.Equal(t, "duplicate_reference", string(apiErr.Code))
	assert.Len(t, srv.PaymentsByReference("order-9"), 1)

	// Once the unconfirmed quote has expired, the reference may be quoted again.
	srv.Advance(payments.QuoteLifetime)
	second := initiate(t, c, r.ID, "10", "order-9")
	assert.NotEqual(t, first.ID, second.ID)
	_, err = c.Payments.Confirm(ctx(t), second.ConfirmParams())
	require.NoError(t, err)

	// A confirmed payment keeps its reference for good.
	srv.Advance(time.Hour)
	_, err = c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("10")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-9"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "duplicate_reference", string(apiErr.Code))
}

func TestConfirmCompletes(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, c := start(t, paymentstest.WithClock(func() time.Time { return fixed }))
	r := createRecipient(t, c, "1000")
	p := initiate(t, c, r.ID, "1000", "order-2") // the limit is inclusive
	srv.Advance(payments.QuoteLifetime - time.Millisecond)
	done, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, p.ID, done.ID)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
	assert.True(t, done.IsCompleted)
	assert.NotEmpty(t, done.LastResponse().IdempotencyKey)
	assert.True(t, done.UpdatedAt.After(p.UpdatedAt))

	stored, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusCompleted, stored.Status)

	// Confirming again, with a new key, executes nothing.
	_, err = c.Payments.Confirm(ctx(t), p.ConfirmParams())
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	assert.Equal(t, "quote_already_confirmed", string(apiErr.Code))
	assert.Equal(t, 1, countEvents(srv, payments.EventPaymentCompleted))
}

func TestConfirmOverLimitIsRejected(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "999.99")
	p := initiate(t, c, r.ID, "1000", "order-3")
	done, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusRejected, done.Status)
	assert.False(t, done.IsCompleted)
	assert.Contains(t, done.LastResponse().Message, "limit")
	assert.Equal(t, 1, countEvents(srv, payments.EventPaymentRejected))
	assert.Zero(t, countEvents(srv, payments.EventPaymentCompleted))

	// The limit is in the recipient's currency: 1500 NGN is 1 USD.
	usd := recipientParams()
	usd.AccountCurrency = "USD"
	one := payments.Amount{Decimal: dec("1.00")}
	usd.AmountLimit = &one
	ru, err := c.Recipients.Create(ctx(t), usd)
	require.NoError(t, err)
	p = initiate(t, c, ru.ID, "1499", "order-4")
	done, err = c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
	p = initiate(t, c, ru.ID, "1600", "order-5")
	done, err = c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusRejected, done.Status)
}

func TestQuoteExpiry(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "50", "order-6")
	srv.Advance(payments.QuoteLifetime)
	// The client's own clock has not moved, so the refusal is the server's.
	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.ErrorIs(t, err, payments.CodeQuoteExpired)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	assert.Equal(t, "quote_expired", string(apiErr.Code))
	stored, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusPending, stored.Status, "nothing was executed")
}

func TestConfirmErrors(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "50", "order-7")

	_, err := c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: "order-7", QuoteID: uuid.NewString()})
	require.ErrorIs(t, err, payments.ErrNotFound)

	_, err = c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: "order-8", QuoteID: p.Quote.QuoteID})
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Len(t, apiErr.Errors, 1)
	assert.Equal(t, "reference", apiErr.Errors[0].Field)

	res := send(t, srv, http.MethodPost, "/payments/confirm", `{"reference":""}`, nil)
	assert.ElementsMatch(t, []string{"reference", "quote_id"}, res.fields())
	stored, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusPending, stored.Status)
}

func countEvents(srv *paymentstest.Server, kind payments.EventType) int {
	n := 0
	for _, ev := range srv.Events() {
		if ev.Type == kind {
			n++
		}
	}
	return n
}
