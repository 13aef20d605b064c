package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// A receiver that runs on several replicas, sharing one PostgreSQL table of
// processed events, and marking orders paid exactly once: the UPDATE and the
// record of the event commit together. The README's "Running several
// replicas" shows this function's body.
func Example() {
	ctx := context.Background()
	verifier, err := webhook.NewSignatureVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// Defaults: a lease of 5 s, renewed while your function runs
	// (pgstore.WithLease), a deadline of 2 s per statement
	// (pgstore.WithTimeout), ids remembered
	// for 7 days (pgstore.WithRetention), table payments_webhook_events.
	store, err := pgstore.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	// CREATE TABLE IF NOT EXISTS ...: safe from every replica at once.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	// Runs in the transaction that records the event as processed.
	markPaid := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if paymentstest.Triggered(ev) || ev.Type != payments.EventPaymentCompleted {
			return nil // a test event from Webhooks.Trigger, or a kind you do not book
		}
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE orders SET paid_at = now() WHERE reference = $1", p.Reference)
		return err // an error rolls the UPDATE back; the service retries
	}
	http.Handle("POST /webhooks", webhook.NewHandler(verifier,
		store.Transactional(markPaid),
		webhook.WithStore(store)))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// Purging on a schedule of yours instead of after every 1000th claim.
func ExampleStore_Purge() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(pool, pgstore.WithPurgeEvery(0))
	if err != nil {
		log.Fatal(err)
	}
	n, err := store.Purge(ctx) // e.g. hourly, from a cron job
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("purged %d expired event ids", n)
}
