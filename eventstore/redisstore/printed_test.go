package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/printcheck"
)

// redisPassword is the password of the client the table's stores use: a
// secret they hold (in the client's options) and must never print.
const redisPassword = "redis-Pa55word-0f-the-merchant"

// printTable is a value of every exported type of redisstore
// (printcheck.All holds it to api/), on a client that holds a password and
// s.
func printTable(t *testing.T, s string) map[string][]any {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Password: redisPassword, Username: s, ClientName: s})
	t.Cleanup(func() { _ = client.Close() })
	// The key prefixes are the merchant's own settings: no text from
	// outside reaches them.
	claims, err := redisstore.NewClaimStore(client)
	require.NoError(t, err)
	outcomes, err := redisstore.NewOutcomeStore(client)
	require.NoError(t, err)
	return map[string][]any{
		"redisstore.ClaimStore":   {claims},
		"redisstore.Option":       {redisstore.WithPrefix(redisstore.DefaultPrefix)},
		"redisstore.OutcomeStore": {outcomes},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of
// redisstore, its stores on a client that holds a password, prints (fmt,
// every verb) and logs (slog) without the password, the API key, a webhook
// secret or personal data (the payments package's test of the same name
// covers the other packages).
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"../../api/github.com_paymentsapi_payments-go_eventstore_redisstore.txt"}, printTable, redisPassword)
}
