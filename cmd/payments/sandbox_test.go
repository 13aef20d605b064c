package main

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestSandboxCommands(t *testing.T) {
	f := startFake(t, paymentstest.WithAdminAPI(), paymentstest.WithProcessingDelay(time.Hour))
	sandbox := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, f.env, append([]string{"sandbox"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		return stdout
	}

	assert.Contains(t, sandbox("pause"), "Deliveries paused")
	assert.True(t, f.DeliveriesPaused())
	assert.Contains(t, sandbox("resume"), "Deliveries resumed")
	assert.False(t, f.DeliveriesPaused())

	before := f.Now()
	assert.Contains(t, sandbox("advance", "5m1s"), "The sandbox's clock is now ")
	assert.GreaterOrEqual(t, f.Now().Sub(before), 5*time.Minute+time.Second)

	assert.Contains(t, sandbox("retries", "1ms,2ms"), "Retry schedule set: 2 retries (1ms, 2ms)")
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, f.WebhookRetryWaits())
	sandbox("retries", "none")
	assert.Empty(t, f.WebhookRetryWaits())

	sink := f.WebhookURL()
	assert.Contains(t, sandbox("webhook-url", "none"), "turned off")
	assert.Empty(t, f.WebhookURL())
	sandbox("webhook-url", sink)
	assert.Equal(t, sink, f.WebhookURL())

	c := f.Client()
	r, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	assert.Contains(t, sandbox("trigger", "recipient.verified", r.ID), "Event recipient.verified ")
	evs := f.Events()
	assert.Equal(t, payments.EventRecipientVerified, evs[len(evs)-1].Type)

	p, err := c.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString(paymentstest.AmountCompletesLate)}, Currency: "NGN", RecipientID: r.ID, Reference: "order-cli-settle",
	})
	require.NoError(t, err)
	_, err = c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID})
	require.NoError(t, err)
	assert.Contains(t, sandbox("settle", p.ID, "failed"), "Payment "+p.ID+" is now failed")
	got, _ := f.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusFailed, got.Status)
}

func TestSandboxCommandsRefuseBadInput(t *testing.T) {
	f := startFake(t, paymentstest.WithAdminAPI())
	events, now := len(f.Events()), f.Now()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"sandbox"}, exitUsage, "sandbox needs a command"},
		{[]string{"sandbox", "explode"}, exitUsage, `unknown sandbox command "explode"`},
		{[]string{"sandbox", "advance", "--", "-1h"}, exitUsage, "only moves forward"},
		{[]string{"sandbox", "advance", "0s"}, exitUsage, "only moves forward"},
		{[]string{"sandbox", "advance"}, exitUsage, "takes 1 argument(s), got 0"},
		{[]string{"sandbox", "webhook-url", "not a url"}, exitUsage, "give an http or https URL"},
		{[]string{"sandbox", "retries", "1s,soon"}, exitUsage, "give waits such as"},
		{[]string{"sandbox", "settle", "x", "pending"}, exitUsage, "give completed, failed or rejected"},
		{[]string{"sandbox", "trigger", "payment.exploded", "x"}, exitFailure, "HTTP 422"},
		{[]string{"sandbox", "trigger", "payment.completed", "nope"}, exitFailure, `no payment with id \"nope\"`},
		{[]string{"sandbox", "settle", "nope", "failed"}, exitFailure, "HTTP 404"},
	} {
		code, _, stderr := runCLI(t, f.env, tc.args...)
		assert.Equal(t, tc.code, code, tc.args)
		assert.Contains(t, stderr, tc.says, tc.args)
		assert.NotContains(t, stderr, f.APIKey())
	}
	assert.Len(t, f.Events(), events, "nothing produced")
	assert.Less(t, f.Now().Sub(now), time.Minute, "the clock did not move")
	assert.NotEmpty(t, f.WebhookURL())

	plain := startFake(t)
	code, _, stderr := runCLI(t, plain.env, "sandbox", "pause")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "needs payments-sandbox with its admin API")
	assert.False(t, plain.DeliveriesPaused())

	code, stdout, _ := runCLI(t, f.env, "sandbox", "--help")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, sandboxUsage, stdout)
}
