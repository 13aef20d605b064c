package pgstore_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// enqueueEvents delivers n new events to q's handler and returns their ids.
func enqueueEvents(t *testing.T, q *testQueue, n int) []string {
	t.Helper()
	h := webhook.NewHandler(storetest.Verifier(t), q.Enqueue)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = storetest.NewEventID(t)
		if code := storetest.Deliver(h, storetest.EventBody(ids[i])); code != http.StatusOK {
			t.Fatalf("delivery: %d, want 200", code)
		}
	}
	return ids
}

// Four movers, each on a pool of its own (four processes), race over 400
// received events while River's insert fails for a while (a trigger that
// raises): every move that failed rolled back, and in the end each event
// is in River exactly once and the outbox is empty.
func TestQueueOutboxMovesEachEventOnce(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	const events = 400
	// Room for every event at once: no worker runs here.
	q := newQueue(t, pool, func(context.Context, pgx.Tx, *payments.Event) error { return nil }, &pgstore.QueueConfig{Workers: events})
	ids := enqueueEvents(t, q, events)
	if n := q.outboxRows(t, pool); n != events {
		t.Fatalf("%d events in the outbox, want %d", n, events)
	}
	// River's insert fails until the trigger goes.
	q.beforeInsert(t, pool, "refuse", q.schema+".river_job", "STATEMENT", `RAISE EXCEPTION 'refused by the test';`)
	if n, err := q.MoveOnce(testCtx(t)); err == nil || n != 0 {
		t.Fatalf("a move whose River insert failed: moved %d, err %v; want 0 and the error", n, err)
	}
	if n := q.outboxRows(t, pool); n != events {
		t.Fatalf("%d events in the outbox after a failed move, want all %d: the move did not roll back", n, events)
	}
	movers := make([]*pgstore.Queue, 4)
	for i := range movers {
		movers[i] = q.replica(t, newPool(t, testPoolURL(t), 4), func(context.Context, pgx.Tx, *payments.Event) error { return nil })
	}
	var failed, moved atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, m := range movers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := m.MoveOnce(testCtx(t))
				if err != nil {
					failed.Add(1)
				}
				moved.Add(int64(n))
				if err == nil && n == 0 {
					return // nothing left
				}
			}
		}()
	}
	eventually(t, time.Minute, "moves failing under the trigger", func() bool { return failed.Load() >= 8 })
	if _, err := pool.Exec(testCtx(t), `DROP TRIGGER refuse ON `+q.schema+`.river_job`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(stop)
	if n := q.outboxRows(t, pool); n != 0 {
		t.Errorf("%d events left in the outbox, want 0", n)
	}
	if n := moved.Load(); n != events {
		t.Errorf("the movers reported %d events moved, want %d", n, events)
	}
	rows, err := pool.Query(testCtx(t), `SELECT args->>'id', count(*) FROM `+q.schema+`.river_job WHERE kind = 'payments_webhook_event' GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id string
		var n int
		if err := r.Scan(&id, &n); err != nil {
			return "", err
		}
		if n != 1 {
			t.Errorf("event %s has %d jobs, want 1", id, n)
		}
		return id, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != events {
		t.Errorf("%d events have a job, want %d", len(jobs), events)
	}
	t.Logf("%d events moved by 4 movers, %d failed moves rolled back; first id %s", len(jobs), failed.Load(), ids[0])
}

// Two workers, each held in its function: the mover keeps River's
// available jobs at its room (4 per worker) and leaves the rest of a
// burst in the outbox, where it costs two narrow writes per event; once
// the workers are free, every event is processed once.
func TestQueueOutboxHoldsBackWhileWorkersAreBusy(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	release := make(chan struct{})
	var running atomic.Int64
	fn := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		running.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return insertPaid(paid)(ctx, tx, ev)
	}
	const workers, events = 2, 50
	q := newQueue(t, pool, fn, &pgstore.QueueConfig{Workers: workers})
	enqueueEvents(t, q, events)
	start(t, q.Queue)
	// The mover fills River up to the room, in batches of one per worker:
	// it stops with between room-workers+1 and room available.
	room := 4 * workers
	waiting := 0
	settled := func() bool {
		s := q.jobStates(t, pool)
		waiting = q.outboxRows(t, pool)
		return s["running"] == workers && s["available"] > room-workers && s["available"] <= room &&
			waiting == events-workers-s["available"]
	}
	eventually(t, time.Minute, "two jobs running, the room available, the rest in the outbox", settled)
	// Several of the mover's polls later, nothing more has moved.
	before := waiting
	time.Sleep(500 * time.Millisecond)
	if !settled() || waiting != before {
		t.Errorf("jobs %v and %d in the outbox (%d before); want %d running, at most %d available, the rest in the outbox",
			q.jobStates(t, pool), waiting, before, workers, room)
	}
	close(release)
	eventually(t, time.Minute, "every event processed", func() bool { return q.jobStates(t, pool)["completed"] == events })
	if n := rowsOf(t, pool, paid, ""); n != events {
		t.Errorf("%d rows in the merchant's table, want %d", n, events)
	}
	if n := q.outboxRows(t, pool); n != 0 {
		t.Errorf("%d events left in the outbox, want 0", n)
	}
}

// An event that waits in the outbox (no worker ran for longer than the
// retention) keeps its id: the purge forgets only ids older than the
// oldest waiting event's, so a redelivery of it enqueues nothing.
func TestQueuePurgeKeepsWaitingEvents(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q := newQueue(t, pool, func(context.Context, pgx.Tx, *payments.Event) error { return nil }, nil)
	waiting := enqueueEvents(t, q, 1)[0]
	// An id moved long ago, older than the waiting one: purged.
	moved := storetest.NewEventID(t)
	for _, stmt := range []struct {
		sql string
		arg any
	}{
		{`INSERT INTO ` + q.table + ` (event_id, enqueued_at, moved) VALUES ($1, now() - interval '30 days', true)`, moved},
		{`UPDATE ` + q.table + ` SET enqueued_at = now() - interval '20 days' WHERE event_id = $1`, waiting},
	} {
		if _, err := pool.Exec(testCtx(t), stmt.sql, stmt.arg); err != nil {
			t.Fatal(err)
		}
	}
	n, err := q.Purge(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || rowsOf(t, pool, q.table, moved) != 0 {
		t.Errorf("purged %d; want 1, the moved event's id", n)
	}
	if rowsOf(t, pool, q.table, waiting) != 1 {
		t.Fatal("the waiting event's id was purged")
	}
	h := webhook.NewHandler(storetest.Verifier(t), q.Enqueue, storetest.NoRecentlyDone())
	if code := storetest.Deliver(h, storetest.EventBody(waiting)); code != http.StatusOK {
		t.Fatalf("redelivery: %d", code)
	}
	if n := q.outboxRows(t, pool); n != 1 {
		t.Errorf("%d events in the outbox after a redelivery of the waiting one, want 1", n)
	}
}

// A duplicate delivery of an event whose row a mover is moving (its
// transaction open, River's insert in it) is answered without waiting for
// that transaction: the answer to a duplicate never waits on a move.
func TestQueueDuplicateDoesNotWaitForAMove(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q := newQueue(t, pool, func(context.Context, pgx.Tx, *payments.Event) error { return nil }, nil)
	id := enqueueEvents(t, q, 1)[0]
	// A move under way: the row marked moved in a transaction that has
	// not committed.
	mover, err := pool.Begin(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mover.Rollback(context.Background()) }()
	if _, err := mover.Exec(testCtx(t), `UPDATE `+q.table+` SET moved = true WHERE event_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	answered := make(chan int, 1)
	go func() {
		h := webhook.NewHandler(storetest.Verifier(t), q.Enqueue, storetest.NoRecentlyDone())
		answered <- storetest.Deliver(h, storetest.EventBody(id))
	}()
	select {
	case code := <-answered:
		if code != http.StatusOK {
			t.Errorf("the duplicate was answered %d, want 200", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the duplicate's answer waited for the move's transaction (30 s with it open)")
	}
	if err := mover.Commit(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := q.outboxRows(t, pool); n != 0 {
		t.Errorf("%d events waiting after the move committed, want 0: the duplicate inserted one", n)
	}
}

// A worker process's mover leaves alone the events another process (a
// receiver) enqueued while that table is still receiving, so that a
// burst's answers do not share the database with River's work for it, and
// moves them once the oldest has waited moveGather (500 ms). The test
// holds "still receiving" for as long as it needs by dating the waiting
// event an hour ahead on the server's clock; an event the worker's own
// process receives is moved at once, and the waiting one with it.
func TestQueueOutboxGathersWhatAnotherProcessReceived(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	var calls atomic.Int64
	fn := func(context.Context, pgx.Tx, *payments.Event) error { calls.Add(1); return nil }
	q := newQueue(t, pool, fn, &pgstore.QueueConfig{Workers: 2})
	receiver := &testQueue{Queue: q.replica(t, newPool(t, testPoolURL(t), 4), fn), table: q.table, schema: q.schema, cfg: q.cfg}
	enqueueEvents(t, receiver, 1)
	if _, err := pool.Exec(testCtx(t), "UPDATE "+q.table+" SET enqueued_at = clock_timestamp() + interval '1 hour'"); err != nil {
		t.Fatal(err)
	}
	start(t, q.Queue)
	// Two of the gathering's looks (one each 500 ms at most) and more:
	// the event still waits, and River has no job.
	time.Sleep(time.Second)
	if n := q.outboxRows(t, pool); n != 1 {
		t.Fatalf("%d events waiting while the receiver's table is receiving, want 1: the mover did not gather", n)
	}
	if s := q.jobStates(t, pool); len(s) != 0 {
		t.Fatalf("River's jobs %v while the receiver's table is receiving, want none", s)
	}
	// The worker's own process receives an event: its mover moves at
	// once, and takes the waiting one in the same batch.
	enqueueEvents(t, q, 1)
	eventually(t, time.Minute, "both events processed", func() bool { return q.jobStates(t, pool)["completed"] == 2 })
	if n := calls.Load(); n != 2 {
		t.Errorf("the function ran %d times, want 2", n)
	}

	// The receiver's event dated an hour ahead again: once it has waited
	// moveGather by the server's clock, the mover moves it.
	enqueueEvents(t, receiver, 1)
	if _, err := pool.Exec(testCtx(t), "UPDATE "+q.table+" SET enqueued_at = clock_timestamp() + interval '1 hour' WHERE NOT moved"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := q.outboxRows(t, pool); n != 1 {
		t.Fatalf("%d events waiting, want 1", n)
	}
	if _, err := pool.Exec(testCtx(t), "UPDATE "+q.table+" SET enqueued_at = clock_timestamp() - interval '1 second' WHERE NOT moved"); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the waiting event processed", func() bool { return q.jobStates(t, pool)["completed"] == 3 })
	if n := calls.Load(); n != 3 {
		t.Errorf("the function ran %d times, want 3", n)
	}
}
