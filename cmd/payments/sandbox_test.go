package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestSandboxCommands(t *testing.T) {
	f := startFake(t, adminAPI(), paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: time.Hour}))
	sandbox := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, f.env, append([]string{"sandbox"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		return stdout
	}

	paused := func() bool {
		var out struct {
			Paused bool `json:"paused"`
		}
		f.admin(t, http.MethodGet, "deliveries", nil, &out)
		return out.Paused
	}
	assert.Contains(t, sandbox("pause"), "Deliveries paused")
	assert.True(t, paused())
	assert.Contains(t, sandbox("resume"), "Deliveries resumed")
	assert.False(t, paused())

	before := f.Now()
	assert.Contains(t, sandbox("advance", "5m1s"), "The sandbox's clock is now ")
	assert.GreaterOrEqual(t, f.Now().Sub(before), 5*time.Minute+time.Second)

	assert.Contains(t, sandbox("retries", "1ms,2ms"), "Retry schedule set: 2 retries (1ms, 2ms)")
	retries := func() []string {
		var out struct {
			Waits []string `json:"waits"`
		}
		f.admin(t, http.MethodGet, "webhook-retries", nil, &out)
		return out.Waits
	}
	assert.Equal(t, []string{"1ms", "2ms"}, retries())
	sandbox("retries", "none")
	assert.Empty(t, retries())

	sink := f.webhookURL(t)
	assert.Contains(t, sandbox("webhook-url", "none"), "turned off")
	assert.Empty(t, f.webhookURL(t))
	sandbox("webhook-url", sink)
	assert.Equal(t, sink, f.webhookURL(t))

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
	f := startFake(t, adminAPI())
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
	assert.NotEmpty(t, f.webhookURL(t))

	plain := startFake(t)
	code, _, stderr := runCLI(t, plain.env, "sandbox", "pause")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "needs payments-sandbox with its admin API")

	code, stdout, _ := runCLI(t, f.env, "sandbox", "--help")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, sandboxUsage, stdout)
}
