package pgstore_test

// The helpers of the Queue's tests: a merchant's table and function, a
// Queue on tables of its own and its replicas, and what they read back.

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// merchantTable creates a table like a merchant's own: deliberately with
// no unique key on the event, so that only the queue keeps it free of
// duplicates.
func merchantTable(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	table := uniqueName("paid_")
	if _, err := pool.Exec(testCtx(tb), "CREATE TABLE "+table+" (id bigserial PRIMARY KEY, event_id text NOT NULL, reference text NOT NULL)"); err != nil {
		tb.Fatal(err)
	}
	dropOnCleanup(tb, pool, table)
	return table
}

// insertPaid is a merchant's processing: one row per event.
func insertPaid(table string) pgstore.TxEventFunc {
	return func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+table+" (event_id, reference) VALUES ($1, $2)", ev.ID, p.Reference)
		return err
	}
}

// rowsOf returns how many rows table has for id ("" for all of them).
func rowsOf(tb testing.TB, pool *pgxpool.Pool, table, id string) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(testCtx(tb), "SELECT count(*) FROM "+table+" WHERE $1 = '' OR event_id = $1", id).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// testQueue is a Queue on tables and a River schema of its own.
type testQueue struct {
	*pgstore.Queue
	table, outcomes, schema string
	cfg                     pgstore.QueueConfig
	pool                    *pgxpool.Pool // the pool it was made on
}

// newQueue migrates a Queue in a fresh River schema; cfg may be nil.
func newQueue(tb testing.TB, pool *pgxpool.Pool, fn pgstore.TxEventFunc, cfg *pgstore.QueueConfig) *testQueue {
	tb.Helper()
	return newQueueOn(tb, pool, fn, cfg, nil)
}

// newQueueOn is newQueue on a River client of the merchant's own, made
// with river.Config rc (its Workers, Schema and Logger set here) when rc
// is not nil.
func newQueueOn(tb testing.TB, pool *pgxpool.Pool, fn pgstore.TxEventFunc, cfg *pgstore.QueueConfig, rc *river.Config) *testQueue {
	tb.Helper()
	c := pgstore.QueueConfig{}
	if cfg != nil {
		c = *cfg
	}
	c.Schema = uniqueName("rq_")
	c.Table = c.Schema + "." + "queue"
	c.OutcomeTable = c.Schema + ".outcomes"
	if _, err := pool.Exec(testCtx(tb), "CREATE SCHEMA "+c.Schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, "DROP SCHEMA "+c.Schema+" CASCADE")
	})
	var q *pgstore.Queue
	var err error
	if rc == nil {
		q, err = pgstore.NewQueue(pool, fn, &c)
	} else {
		var w *pgstore.Worker
		if w, err = pgstore.NewWorker(pool, fn, &c); err != nil {
			tb.Fatal(err)
		}
		rc.Workers = river.NewWorkers()
		river.AddWorker(rc.Workers, w)
		rc.Schema, rc.Logger = c.Schema, slog.New(slog.DiscardHandler)
		var client *river.Client[pgx.Tx]
		if client, err = river.NewClient(riverpgxv5.New(pool), rc); err != nil {
			tb.Fatal(err)
		}
		q, err = w.Queue(client)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := q.Migrate(testCtx(tb)); err != nil {
		tb.Fatal(err)
	}
	return &testQueue{Queue: q, table: c.Table, outcomes: c.OutcomeTable, schema: c.Schema, cfg: c, pool: pool}
}

// replica is another process's Queue on the same tables: its own pool and
// River client.
func (q *testQueue) replica(tb testing.TB, pool *pgxpool.Pool, fn pgstore.TxEventFunc) *pgstore.Queue {
	tb.Helper()
	c := q.cfg
	r, err := pgstore.NewQueue(pool, fn, &c)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// start starts q's workers until the test ends.
func start(tb testing.TB, q *pgstore.Queue) {
	tb.Helper()
	if err := q.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
}

// enqueued counts the events the Queue's own table holds (the rows its
// Enqueue wrote); River's jobs are counted through its API (jobs).
func (q *testQueue) enqueued(tb testing.TB) int {
	tb.Helper()
	var n int
	if err := q.pool.QueryRow(testCtx(tb), "SELECT count(*) FROM "+q.table).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// jobStates counts the queue's event jobs by state, as River's API lists them.
func (q *testQueue) jobStates(tb testing.TB, _ *pgxpool.Pool) map[string]int {
	tb.Helper()
	m := map[string]int{}
	for _, j := range q.jobs(tb) {
		m[string(j.State)]++
	}
	return m
}

// jobs lists the queue's event jobs through River's API.
func (q *testQueue) jobs(tb testing.TB) []*rivertype.JobRow {
	tb.Helper()
	var all []*rivertype.JobRow
	params := river.NewJobListParams().Kinds(pgstore.EventArgs{}.Kind()).First(10000)
	for {
		res, err := q.Client().JobList(testCtx(tb), params)
		if err != nil {
			tb.Fatal(err)
		}
		for _, j := range res.Jobs {
			if !strings.Contains(string(j.EncodedArgs), `"purge"`) {
				all = append(all, j)
			}
		}
		if res.LastCursor == nil || len(res.Jobs) < 10000 {
			return all
		}
		params = params.After(res.LastCursor)
	}
}

// eventually polls cond every 20 ms until it holds, or fails the test
// after limit: a bound for a loaded machine, not a measurement.
func eventually(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// within receives from ch, or fails the test after a minute (a bound for
// a loaded machine), so that a broken queue fails the test rather than
// hanging it.
func within[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		tb.Fatalf("after a minute: %s", what)
		var zero T
		return zero
	}
}

// testPoolURL is the shared server's URL, for a pool of another "process".
func testPoolURL(tb testing.TB) string { return testservers.SharedPostgres(tb).URL() }

// newEvents returns n events with ids of their own.
func newEvents(tb testing.TB, n int) []*payments.Event {
	tb.Helper()
	events := make([]*payments.Event, n)
	for i := range events {
		ev, err := payments.ParseEvent(storetest.EventBody(storetest.NewEventID(tb)))
		if err != nil {
			tb.Fatal(err)
		}
		events[i] = ev
	}
	return events
}
