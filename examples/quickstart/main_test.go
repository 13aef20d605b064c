package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstartOnTheFake runs the README's first command as a test: the
// whole journey against the in-process fake, with every webhook verified.
func TestQuickstartOnTheFake(t *testing.T) {
	t.Setenv("PAYMENTS_API_KEY", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	transcript := out.String()

	for _, want := range []string{
		"the same create sent again with that key returns the same recipient: true",
		`account name is now "Ada N. Okafor"`,
		"limit 250000.00",
		"Sandbox Payer paid 50000.00 NGN in",
		"amount 15000.50 NGN + fee 225.01 = total to collect 15225.51 (exchange rate 1)",
		"is completed (completed: true)",
		"Done.",
	} {
		assert.Contains(t, transcript, want)
	}
	for _, event := range []string{
		"recipient.created", "virtual_account.created", "virtual_account.payment_received",
		"payment.initiated", "payment.completed",
	} {
		assert.Regexp(t, `webhook `+event+` +verified, event [0-9a-f-]{36}`, transcript)
	}
	// Money prints with two decimals, in the steps and in the webhooks.
	assert.Regexp(t, `webhook virtual_account.payment_received +verified, event \S+: 50000\.00 NGN from `, transcript)
	assert.Regexp(t, `webhook payment.completed +verified, event \S+: payment completed, 15000\.50 NGN`, transcript)
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("webhook recipient.created ")),
		"the replayed create must not emit a second recipient.created")
}
