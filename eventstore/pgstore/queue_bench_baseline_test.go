package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// The hand-written receivers of BenchmarkQueue: what a competent merchant
// writes with River alone for the Queue's guarantee, and the floor that
// only verifies and INSERTs.

// handmadeArgs is the hand-written receiver's job: the event's id alone,
// whose body waits in the receiver's table (no personal data in River's).
type handmadeArgs struct {
	ID string `json:"id"`
}

func (handmadeArgs) Kind() string { return "handmade_webhook_event" }

// handmadeWorker reads the event's body, runs the merchant's function,
// completes the job (river.JobCompleteTx), clears the body and commits,
// all in one transaction.
type handmadeWorker struct {
	river.WorkerDefaults[handmadeArgs]
	pool        *pgxpool.Pool
	fn          pgstore.TxEventFunc
	read, clear string
}

func (w *handmadeWorker) Work(ctx context.Context, job *river.Job[handmadeArgs]) error {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var body []byte
	if err := tx.QueryRow(ctx, w.read, job.Args.ID).Scan(&body); err != nil {
		return err
	}
	if body == nil {
		return river.JobCancel(fmt.Errorf("event %s already processed", job.Args.ID))
	}
	ev, err := payments.ParseEvent(body)
	if err != nil {
		return river.JobCancel(err)
	}
	if err := w.fn(ctx, tx, ev); err != nil {
		return err
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, w.clear, job.Args.ID); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// baselineRiver is a replica of the hand-written River receiver: verify
// (storetest.HandWritten); in one transaction, INSERT the event's id and
// body into its table ON CONFLICT DO NOTHING and, only if the row is new,
// InsertTx of its job; 200 once it committed (a duplicate too). In the
// same process, a River client whose DefaultWorkers workers run
// handmadeWorker. Its table and River's are in a schema of the run's own.
func baselineRiver(b *testing.B, r *queueRun) http.Handler {
	pool := r.pool(b)
	if r.schema == "" {
		r.schema = uniqueName("handmade_rq_")
		r.table = r.schema + ".events"
		r.kind = handmadeArgs{}.Kind()
		createSchema(b, r, r.schema)
		m, err := rivermigrate.New(riverpgxv5.New(r.admin), &rivermigrate.Config{Schema: r.schema, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Migrate(testCtx(b), rivermigrate.DirectionUp, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := r.admin.Exec(testCtx(b), "CREATE TABLE "+r.table+
			" (event_id text PRIMARY KEY, received_at timestamptz NOT NULL DEFAULT now(), body bytea)"); err != nil {
			b.Fatal(err)
		}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &handmadeWorker{pool: pool, fn: r.fn,
		read:  "SELECT body FROM " + r.table + " WHERE event_id = $1",
		clear: "UPDATE " + r.table + " SET body = NULL WHERE event_id = $1"})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: pgstore.DefaultWorkers}},
		Workers: workers,
		Schema:  r.schema,
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	r.starts = append(r.starts, client.Start)
	r.stops = append(r.stops, client.Stop)
	insert := "INSERT INTO " + r.table + " (event_id, body) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING"
	return storetest.HandWritten(b, pgstore.DefaultTimeout, func(ctx context.Context, ev *payments.Event) int {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, insert, ev.ID, ev.RawJSON())
			if err != nil || tag.RowsAffected() == 0 {
				return err // a duplicate: nothing more to write
			}
			_, err = client.InsertTx(ctx, tx, handmadeArgs{ID: ev.ID}, nil)
			return err
		})
		if err != nil {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
}

// floorInsert is a replica of the floor: verify, INSERT the event (its id
// and body: what a receiver must keep to process it later) ON CONFLICT DO
// NOTHING, one statement in its own transaction, 200. It processes
// nothing: it is there for the answer's time.
func floorInsert(b *testing.B, r *queueRun) http.Handler {
	pool := r.pool(b)
	if r.table == "" {
		r.table = uniqueName("floor_")
		dropOnCleanup(b, r.admin, r.table)
		if _, err := r.admin.Exec(testCtx(b), "CREATE TABLE "+r.table+
			" (event_id text PRIMARY KEY, body json NOT NULL, received_at timestamptz NOT NULL DEFAULT now())"); err != nil {
			b.Fatal(err)
		}
	}
	insert := "INSERT INTO " + r.table + " (event_id, body) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING"
	return storetest.HandWritten(b, pgstore.DefaultTimeout, func(ctx context.Context, ev *payments.Event) int {
		if _, err := pool.Exec(ctx, insert, ev.ID, string(ev.RawJSON())); err != nil {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
}

// createSchema creates a schema, dropped with its tables when the
// benchmark ends.
func createSchema(b *testing.B, r *queueRun, schema string) {
	if _, err := r.admin.Exec(testCtx(b), "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = r.admin.Exec(context.Background(), fmt.Sprintf("DROP SCHEMA %s CASCADE", schema))
	})
}
