package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// ordersSQL is the merchant's own schema: the orders the function books,
// one row per event it processed, and reconcile's checkpoint.
const ordersSQL = `CREATE TABLE IF NOT EXISTS orders (
    reference  text        PRIMARY KEY,
    payment_id text        NOT NULL,
    status     text        NOT NULL,
    event_id   text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS order_events (
    event_id   text        NOT NULL,
    type       text        NOT NULL,
    reference  text,
    booked_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS reconcile_checkpoint (
    name       text        PRIMARY KEY,
    event_id   text        NOT NULL,
    created_at timestamptz NOT NULL
)`

// app is what every process of the example shares: the pool, the queue
// (which every process makes, and only workers start) and the merchant's
// function.
type app struct {
	pool  *pgxpool.Pool
	queue *pgstore.Queue
	// call is the slow part of the merchant's function: a call to an ERP,
	// a mail. The example's is a pause of -call-time.
	call   func(ctx context.Context, ev *payments.Event) error
	logger *slog.Logger
}

// newApp makes the queue on pool and runs the migrations: River's tables,
// the queue's and the tracker's (queue.Migrate), then the merchant's. Both
// are idempotent and safe from every process at once. ownRiver puts the queue on a River client of the merchant's own
// (river.go) instead of the one pgstore.NewQueue makes.
func newApp(ctx context.Context, pool *pgxpool.Pool, call func(context.Context, *payments.Event) error, logger *slog.Logger, ownRiver bool) (*app, error) {
	a := &app{pool: pool, call: call, logger: logger}
	var queue *pgstore.Queue
	var err error
	if ownRiver {
		queue, err = newQueueOnYourRiver(pool, a.book, logger) // river.go
	} else {
		// region queue
		// The zero QueueConfig is the recommended set-up: 10 workers per
		// process, a run of the function cancelled after 30 s
		// (JobTimeout), a worker that died rescued after 1 minute
		// (RescueAfter), event ids remembered 7 days (Retention).
		queue, err = pgstore.NewQueue(pool, a.book, &pgstore.QueueConfig{Logger: logger})
		// endregion
	}
	if err != nil {
		return nil, err
	}
	// region migrate
	// River's migrations, the queue's table and the outcome table.
	if err := queue.Migrate(ctx); err != nil {
		return nil, err
	}
	// endregion
	a.queue = queue
	for _, stmt := range strings.Split(ordersSQL, ";\n") {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("create the orders tables: %w (does the role have CREATE on the schema?)", err)
		}
	}
	return a, nil
}

// region book
// book is the merchant's function. It runs in a River worker, in the
// transaction that also completes the event's job and records its outcome:
// its writes commit once, together with them, however long the call takes;
// the service got its 200 when the event was enqueued.
func (a *app) book(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
	if webhook.Triggered(ev) {
		return nil // a test event (Webhooks.Trigger, payments trigger): book no order
	}
	// The slow part (an ERP, a mail). Stop when ctx is cancelled: after
	// QueueConfig.JobTimeout, or when the worker stops.
	if err := a.call(ctx, ev); err != nil {
		return err // nothing commits; River runs the event again with back-off
	}
	var reference string
	if strings.HasPrefix(string(ev.Type), "payment.") {
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		reference = p.Reference
		// Forward only: a late payment.initiated never undoes a final state.
		if _, err := tx.Exec(ctx, `INSERT INTO orders (reference, payment_id, status, event_id)
VALUES ($1, $2, $3, $4)
ON CONFLICT (reference) DO UPDATE SET status = EXCLUDED.status, event_id = EXCLUDED.event_id, updated_at = now()
WHERE orders.status NOT IN ('completed', 'failed', 'rejected')`,
			p.Reference, p.ID, string(p.Status), ev.ID); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO order_events (event_id, type, reference) VALUES ($1, $2, NULLIF($3, ''))`,
		ev.ID, string(ev.Type), reference)
	return err
}

// endregion

// receiver is the receiving process's HTTP handler: POST /webhooks
// verifies each delivery and enqueues its event once (200 as soon as that
// committed, whatever book costs); GET /healthz answers 200 while the
// database answers.
func (a *app) receiver(verifier webhook.Verifier) (http.Handler, *webhook.Handler) {
	// region receiver
	h := webhook.NewQueueHandler(verifier, a.queue.Enqueue, webhook.WithLogger(a.logger))
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.pool.Ping(ctx); err != nil {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	// endregion
	return mux, h
}

// await waits for the final outcome of the payment with this reference (or
// id). The tracker answers as soon as the worker's transaction that decided
// it committed, so the order row is there when it answers; when no webhook
// came within listAfter, it lists the service's events and enqueues them,
// so that book runs for them too.
func (a *app) await(ctx context.Context, client *payments.Client, listAfter time.Duration, reference string) (outcome.Result, error) {
	// region await
	tracker := a.queue.Tracker(outcome.WithEventList(client, listAfter))
	res, err := tracker.Await(ctx, reference)
	// endregion
	var conflict *outcome.ConflictError
	if errors.As(err, &conflict) {
		a.logger.Warn("two different final events for one payment; the first stands", slog.String("error", err.Error()))
		return res, nil
	}
	return res, err
}
