// Command deliverypath runs one delivery through the recommended
// PostgreSQL path in a binary built with coverage, and writes the coverage
// counters of that delivery alone: TestDeliveryPathFiles reads from them
// which of the project's files a delivery crosses, from the HTTP request
// to the commit of the merchant's function.
//
// Usage: deliverypath DIR DATABASE_URL. The URL's search_path is a schema
// of the test's own: the Queue's tables and River's are made there with
// their default names.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/coverage"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

const secret = "whsec_delivery_path"

func run(ctx context.Context, dir, dbURL string) error {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = pgstore.DefaultWorkers + 8 // as docs/webhooks.md sizes it
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (event_id text PRIMARY KEY, kind text NOT NULL)`); err != nil {
		return err
	}
	// The merchant's function: one row per event, in the job's
	// transaction. It calls nothing of the SDK, so that what is counted
	// is the path's own: one that decodes the event's payment
	// (ev.Payment) adds that decoding's files.
	book := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		_, err := tx.Exec(ctx, `INSERT INTO orders (event_id, kind) VALUES ($1, $2)`, ev.ID, ev.Type)
		return err
	}
	queue, err := pgstore.NewQueue(pool, book, nil)
	if err != nil {
		return err
	}
	if err := queue.Migrate(ctx); err != nil {
		return err
	}
	if err := queue.Start(ctx); err != nil {
		return err
	}
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		return err
	}
	srv := httptest.NewServer(webhook.NewQueueHandler(verifier, queue.Enqueue))
	defer srv.Close()

	// A first delivery, and the purge a started Queue runs at once, so
	// that what runs once per process is not counted.
	if err := deliver(ctx, pool, srv.URL, "00000000-0000-4000-8000-000000000001"); err != nil {
		return fmt.Errorf("the first delivery: %w", err)
	}
	if err := purged(ctx, pool); err != nil {
		return err
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	if err := coverage.ClearCounters(); err != nil {
		return err
	}
	// What the worker runs after the commit (the outcome's NOTIFY) is in
	// files the delivery crossed before it.
	err = errors.Join(deliver(ctx, pool, srv.URL, "00000000-0000-4000-8000-000000000002"), coverage.WriteCountersDir(dir))
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return errors.Join(err, queue.Stop(stopCtx))
}

// deliver sends one signed delivery over HTTP and waits until the
// merchant's function's row committed.
func deliver(ctx context.Context, pool *pgxpool.Pool, url, id string) error {
	body := []byte(`{"id":"` + id + `","event":"payment.completed","created_at":"2024-05-01T10:00:00Z",` +
		`"data":{"id":"p1","reference":"r-` + id + `","status":"completed","amount":"10.00","currency":"NGN"}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE event_id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the merchant's row never committed: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// purged waits until the purge job a started Queue inserts at once has
// completed, read through River's API on an insert-only client.
func purged(ctx context.Context, pool *pgxpool.Pool) error {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return err
	}
	params := river.NewJobListParams().Kinds(pgstore.EventArgs{}.Kind()).States(rivertype.JobStateCompleted)
	for {
		res, err := client.JobList(ctx, params)
		if err != nil {
			return err
		}
		for _, j := range res.Jobs {
			if strings.Contains(string(j.EncodedArgs), `"purge"`) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Queue's first purge never completed: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
