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
	"github.com/paymentsapi/payments-go/webhook"
)

// The recommended set-up on PostgreSQL: the receiver verifies each delivery,
// records the event and its River job once, in one transaction, and answers; River
// workers, in this process or others, mark the order paid in a transaction
// that also completes the job, so the UPDATE happens exactly once however
// long it takes. docs/webhooks.md shows this function's body.
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

	// Runs in a River worker, in the transaction that completes the job.
	markPaid := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if ev.Type != payments.EventPaymentCompleted {
			return nil // a kind you do not book
		}
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE orders SET paid_at = now() WHERE reference = $1", p.Reference)
		return err // an error rolls the UPDATE back; River runs it again with back-off
	}
	queue, err := pgstore.NewQueue(pool, markPaid, nil)
	if err != nil {
		log.Fatal(err)
	}
	// River's migrations and the queue's tables: safe from every process at once.
	if err := queue.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	// Workers: in this process here; in as many processes as you like.
	if err := queue.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = queue.Stop(context.Background()) }()

	http.Handle("POST /webhooks", webhook.NewQueueHandler(verifier, queue.Enqueue))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// The simpler mode: the function runs during the delivery, at least once,
// with a lease in a shared table of processed event ids.
func ExampleClaimStore() {
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
	store, err := pgstore.NewClaimStore(pool)
	if err != nil {
		log.Fatal(err)
	}
	// CREATE TABLE IF NOT EXISTS ...: safe from every replica at once.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	markPaid := func(ctx context.Context, ev *payments.Event) error {
		if ev.Type != payments.EventPaymentCompleted {
			return nil
		}
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		// Idempotent: a second run (at least once) changes nothing.
		_, err = pool.Exec(ctx, "UPDATE orders SET paid_at = now() WHERE reference = $1 AND paid_at IS NULL", p.Reference)
		return err
	}
	http.Handle("POST /webhooks", webhook.NewHandler(verifier, markPaid, webhook.WithClaimStore(store)))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// Purging on a schedule of yours instead of after every 1000th claim.
func ExampleClaimStore_Purge() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.NewClaimStore(pool, pgstore.WithPurgeEvery(0))
	if err != nil {
		log.Fatal(err)
	}
	n, err := store.Purge(ctx) // e.g. hourly, from a cron job
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("purged %d expired event ids", n)
}
