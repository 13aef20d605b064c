package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/printcheck"
)

// dbPassword is the password of the pool the table's stores use: a secret
// they hold (in the pool's configuration) and must never print.
const dbPassword = "pg-Pa55word-0f-the-merchant"

// printTable is a value of every exported type of pgstore (printcheck.All
// holds it to api/), on a pool whose connection string carries a password
// and s.
func printTable(t *testing.T, s string) map[string][]any {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://merchant:%s@127.0.0.1:1/payments?sslmode=disable&application_name=x", dbPassword))
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["application_name"] = s
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects on first use: never, here
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	claims, err := pgstore.NewClaimStore(pool)
	require.NoError(t, err)
	outcomes, err := pgstore.NewOutcomeStore(pool)
	require.NoError(t, err)
	fn := func(context.Context, pgx.Tx, *payments.Event) error { return nil }
	queue, err := pgstore.NewQueue(pool, fn, nil)
	require.NoError(t, err)
	worker, err := pgstore.NewWorker(pool, fn, nil)
	require.NoError(t, err)
	// A QueueConfig is the merchant's own settings (table and schema
	// names, durations): no text from outside reaches it.
	qc := pgstore.QueueConfig{Table: pgstore.DefaultTable, OutcomeTable: pgstore.DefaultOutcomeTable, Schema: "public"}
	// EventArgs holds an event's id, which the service gives and which is
	// neither a secret nor personal data (River UI shows it).
	args := pgstore.EventArgs{ID: "evt_1"}
	return map[string][]any{
		"pgstore.EventArgs":    {args},
		"pgstore.Worker":       {worker},
		"pgstore.ClaimStore":   {claims},
		"pgstore.Option":       {pgstore.WithTable(s)},
		"pgstore.OutcomeStore": {outcomes},
		"pgstore.Queue":        {queue},
		"pgstore.QueueConfig":  {qc},
		"pgstore.TxEventFunc":  {pgstore.TxEventFunc(fn)},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of pgstore,
// its stores and queue on a pool that holds a database password, with the
// API key, a webhook secret or personal data in every text member, prints
// (fmt, every verb) and logs (slog) without them (the payments package's
// test of the same name covers the other packages).
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"../../api/github.com_paymentsapi_payments-go_eventstore_pgstore.txt"}, printTable, dbPassword)
}
