package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// Two receiving replicas, three deliveries of each event (concurrent and
// late), two worker processes: each event's function commits exactly once,
// and a delivery is answered 200 without waiting for the function.
func TestQueueProcessesEachEventOnce(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	other := q.replica(t, newPool(t, testPoolURL(t), 8), c.fn(paid))
	handlers := []http.Handler{
		webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue),
		webhook.NewQueueHandler(storetest.Verifier(t), other.Enqueue),
	}
	const events = 60
	bodies, ids := make([][]byte, events), make([]string, events)
	for i := range bodies {
		ids[i] = storetest.NewEventID(t)
		bodies[i] = storetest.EventBody(ids[i])
	}
	var wg sync.WaitGroup
	for round := 0; round < 3; round++ {
		for i, b := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code := storetest.Deliver(handlers[(i+round)%2], b); code != http.StatusOK {
					t.Errorf("delivery: %d, want 200", code)
				}
			}()
		}
		wg.Wait()
	}
	if s := q.jobStates(t, pool); s["available"] != events || len(s) != 1 {
		t.Fatalf("jobs in River before any worker started: %v, want %d available (one per event, inserted with it)", s, events)
	}
	start(t, q.Queue)
	start(t, other)
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == events })
	if s := q.jobStates(t, pool); len(s) != 1 {
		t.Errorf("jobs by state %v, want %d completed and nothing else (each event enqueued once)", s, events)
	}
	if n := q.enqueued(t); n != events {
		t.Errorf("the Queue's table holds %d events, want %d", n, events)
	}
	once, twice, never := c.tally(t, pool, paid, ids)
	if once != events || twice != 0 || never != 0 {
		t.Errorf("events processed once %d, twice %d, never %d; want %d once", once, twice, never, events)
	}
}

// The answer does not wait for the function: a delivery gets 200 while the
// function of its event is still running (blocked here until the test
// lets it go).
func TestQueueAnswersBeforeTheFunctionRuns(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	release := make(chan struct{})
	running := make(chan string, 1)
	q := newQueue(t, pool, func(ctx context.Context, _ pgx.Tx, ev *payments.Event) error {
		running <- ev.ID
		<-release
		return nil
	}, nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	id := storetest.NewEventID(t)
	if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
		t.Fatalf("delivery: %d, want 200", code)
	}
	if got := within(t, running, "the function running"); got != id {
		t.Fatalf("the function got %s, want %s", got, id)
	}
	// Another delivery while the function runs: 200 as well, no second job.
	if code := storetest.Deliver(webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), storetest.EventBody(id)); code != http.StatusOK {
		t.Fatalf("redelivery while the function runs: %d, want 200", code)
	}
	close(release)
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	if n := len(q.jobStates(t, pool)); n != 1 {
		t.Errorf("jobs in states %v, want one completed job", q.jobStates(t, pool))
	}
}

// The transaction the function gets is pgx's own: a use after the function
// returned fails with pgx.ErrTxClosed, and nothing of it reaches the
// database; the function's Commit only releases its savepoint, so the
// job's completion still rides the same commit.
func TestQueueTxIsClosedAfterTheFunction(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	kept := make(chan pgx.Tx, 1)
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insertPaid(paid)(ctx, tx, ev); err != nil {
			return err
		}
		kept <- tx
		return tx.Commit(ctx) // a merchant's habit: harmless here
	}, nil)
	start(t, q.Queue)
	id := storetest.NewEventID(t)
	if code := storetest.Deliver(webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), storetest.EventBody(id)); code != http.StatusOK {
		t.Fatalf("delivery: %d", code)
	}
	tx := within(t, kept, "the function returned")
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	_, err := tx.Exec(testCtx(t), "INSERT INTO "+paid+" (event_id, reference) VALUES ('late', 'late')")
	if !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("a late Exec on the function's tx: %v, want pgx.ErrTxClosed", err)
	}
	if n := rowsOf(t, pool, paid, "late"); n != 0 {
		t.Errorf("the late write reached the table (%d rows)", n)
	}
	if n := rowsOf(t, pool, paid, id); n != 1 {
		t.Errorf("%d rows for the event, want 1", n)
	}
}

// A function that outlives its attempt commits nothing: River's rescuer
// (on a merchant's client that rescues after 3 s, the function's timeout
// being 2 s) takes the job back while the function runs, ignoring its
// context; once another attempt is running, the first function returns
// nil, and its attempt rolls back (its context ended; had it not, the
// fence in its transaction, the job's attempt and state under the job
// row's lock, would find the attempt gone: ErrJobRescued). The row that
// commits is the second call's.
func TestQueueRescuedAttemptCommitsNothing(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	rescued := make(chan struct{})
	defer func() {
		select {
		case <-rescued:
		default:
			close(rescued) // a failed test's first call returns
		}
	}()
	fn := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		call := calls.Add(1)
		if _, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, $2)", ev.ID, fmt.Sprint(call)); err != nil {
			return err
		}
		if call == 1 {
			<-rescued
		}
		return nil
	}
	q := newQueueOn(t, pool, fn, &pgstore.QueueConfig{JobTimeout: 2 * time.Second, RescueAfter: 3 * time.Second}, &river.Config{
		Queues:     map[string]river.QueueConfig{pgstore.QueueName: {MaxWorkers: 2}},
		JobTimeout: 2 * time.Second, RescueStuckJobsAfter: 3 * time.Second,
	})
	start(t, q.Queue)
	id := enqueueEvents(t, q, 1)[0]
	// River's rescuer looks every 30 s; the second attempt then waits for
	// the first's lock on the event's row.
	eventually(t, 2*time.Minute, "the job rescued and running again", func() bool {
		j := q.jobOf(t, id)
		return j.State == rivertype.JobStateRunning && j.Attempt >= 2
	})
	close(rescued)
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	rows, _ := pool.Query(testCtx(t), "SELECT reference FROM "+paid+" WHERE event_id = $1", id)
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0] == "1" {
		t.Errorf("the merchant's rows for the event: %v, want one, not the rescued first call's", refs)
	}
}

// A failing function is retried by River, not by the sender: the delivery
// got 200, the job's first attempt failed (its writes rolled back), a later
// one committed.
func TestQueueRetriesAFailingFunction(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var attempts atomic.Int64
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insertPaid(paid)(ctx, tx, ev); err != nil {
			return err
		}
		if attempts.Add(1) == 1 {
			return fmt.Errorf("the ERP is down")
		}
		return nil
	}, nil)
	start(t, q.Queue)
	id := storetest.NewEventID(t)
	if code := storetest.Deliver(webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), storetest.EventBody(id)); code != http.StatusOK {
		t.Fatalf("delivery: %d", code)
	}
	// River's first retry comes about a second after the failure.
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	if n := rowsOf(t, pool, paid, id); n != 1 {
		t.Errorf("%d rows for the event, want 1 (the failed attempt's rolled back)", n)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

// Reconcile enqueues through the same unique insert as the Queue's
// handler: listed events that no delivery brought reach the function;
// the one a delivery brought is already done, and the checkpoint is the
// last one listed. Reconciled again once every event was processed, and
// delivered again after that, nothing is enqueued twice: each event is
// processed once, none never.
func TestQueueReconcile(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	events := newEvents(t, 5)
	var ids []string
	for _, ev := range events {
		ids = append(ids, ev.ID)
	}
	if code := storetest.Deliver(h, events[1].RawJSON()); code != http.StatusOK {
		t.Fatalf("delivery: %d", code)
	}
	list := func(yield func(*payments.Event, error) bool) {
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
	res, err := q.Reconcile(testCtx(t), list)
	if err != nil {
		t.Fatal(err)
	}
	if res.Enqueued != 4 || res.AlreadyDone != 1 || res.Checkpoint.ID != events[4].ID {
		t.Errorf("reconcile: %+v, want 4 enqueued, 1 already done, checkpoint %s", res, events[4].ID)
	}
	start(t, q.Queue)
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == len(events) })
	if res, err := q.Reconcile(testCtx(t), list); err != nil || res.Enqueued != 0 || res.AlreadyDone != len(events) {
		t.Errorf("reconcile again: %+v, %v; want all %d already done", res, err, len(events))
	}
	for _, ev := range events {
		if code := storetest.Deliver(h, ev.RawJSON()); code != http.StatusOK {
			t.Fatalf("a delivery after the reconcile: %d", code)
		}
	}
	if n := q.enqueued(t); n != len(events) {
		t.Errorf("the Queue's table holds %d events, want %d", n, len(events))
	}
	if s := q.jobStates(t, pool); s["completed"] != len(events) || len(s) != 1 {
		t.Errorf("jobs by state %v, want %d completed and nothing else", s, len(events))
	}
	once, twice, never := c.tally(t, pool, paid, ids)
	if once != len(events) || twice != 0 || never != 0 {
		t.Errorf("events processed once %d, twice %d, never %d; want %d once", once, twice, never, len(events))
	}
}

// webhook.NewHandler(verifier, queue.Enqueue), the way this package
// recommended before NewQueueHandler, still works as NewHandler's doc
// says: Enqueue runs as an EventFunc under the handler's claim (in memory
// by default), a redelivery to the same handler is answered from its
// memory without reaching Enqueue, a replica that remembers nothing
// reaches it and the Queue dedupes, and a database that does not answer
// makes Enqueue's error (webhook.ErrUnavailable) a 503. Each event is
// processed once.
func TestQueueEnqueueUnderNewHandler(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	var enqueues atomic.Int64
	enqueue := func(ctx context.Context, ev *payments.Event) error { enqueues.Add(1); return q.Enqueue(ctx, ev) }
	h := webhook.NewHandler(storetest.Verifier(t), enqueue)
	ids := []string{storetest.NewEventID(t), storetest.NewEventID(t)}
	for _, id := range ids {
		for range 2 {
			if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
				t.Fatalf("delivery: %d, want 200", code)
			}
		}
	}
	if n := enqueues.Load(); n != int64(len(ids)) {
		t.Errorf("Enqueue ran %d times for %d events delivered twice to one handler, want %d", n, len(ids), len(ids))
	}
	if code := storetest.Deliver(webhook.NewHandler(storetest.Verifier(t), enqueue), storetest.EventBody(ids[0])); code != http.StatusOK {
		t.Fatalf("a redelivery to another replica: %d, want 200", code)
	}
	if n := enqueues.Load(); n != int64(len(ids))+1 {
		t.Errorf("Enqueue ran %d times after a redelivery to another replica, want %d", n, len(ids)+1)
	}
	if n := q.enqueued(t); n != len(ids) {
		t.Errorf("the Queue's table holds %d events, want %d", n, len(ids))
	}
	down, err := pgxpool.New(context.Background(), "postgres://merchant@127.0.0.1:1/payments?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	dq, err := pgstore.NewQueue(down, c.fn(paid), nil)
	if err != nil {
		t.Fatal(err)
	}
	unreachable := storetest.NewEventID(t)
	if code := storetest.Deliver(webhook.NewHandler(storetest.Verifier(t), dq.Enqueue), storetest.EventBody(unreachable)); code != http.StatusServiceUnavailable {
		t.Errorf("a delivery whose database is down: %d, want 503", code)
	}
	start(t, q.Queue)
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == len(ids) })
	if s := q.jobStates(t, pool); s["completed"] != len(ids) || len(s) != 1 {
		t.Errorf("jobs by state %v, want %d completed and nothing else", s, len(ids))
	}
	once, twice, never := c.tally(t, pool, paid, append(ids, unreachable))
	if once != len(ids) || twice != 0 || never != 1 {
		t.Errorf("events processed once %d, twice %d, never %d; want %d once and the unreachable one never", once, twice, never, len(ids))
	}
}

// The tracker's row rides the job's transaction: Await in another process
// (its own pool and tracker) returns the payment's outcome only once the
// function of the deciding event committed, never before.
func TestQueueAwaitNeverBeforeTheFunctionCommitted(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	release := make(chan struct{})
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insertPaid(paid)(ctx, tx, ev); err != nil {
			return err
		}
		<-release
		return nil
	}, nil)
	start(t, q.Queue)
	elsewhere := newPool(t, testPoolURL(t), 4)
	tracker := q.replica(t, elsewhere, insertPaid(paid)).Tracker()
	id := storetest.NewEventID(t)
	body := storetest.EventBody(id)
	ev, err := payments.ParseEvent(body)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ev.Payment()
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		state string
		rows  int
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := tracker.Await(testCtx(t), p.ID)
		// What the merchant's table holds the moment Await returns.
		done <- answer{string(res.State), rowsOf(t, elsewhere, paid, id), err}
	}()
	if code := storetest.Deliver(webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), body); code != http.StatusOK {
		t.Fatalf("delivery: %d", code)
	}
	select {
	case a := <-done:
		t.Fatalf("Await returned while the function had not committed: %+v", a)
	case <-time.After(200 * time.Millisecond): // a look, not a bound: Await must still wait
	}
	close(release)
	a := <-done
	if a.err != nil || a.state != "completed" || a.rows != 1 {
		t.Errorf("Await: state %q, %d merchant rows at its return, err %v; want completed and 1", a.state, a.rows, a.err)
	}
}

// Two events of one payment in flight together do not wait on each other
// for the function's duration: the tracker's row is written after the
// function, at the end of the job's transaction, so the second event
// commits while the first one's function still runs.
func TestQueueEventsOfOnePaymentDoNotBlockEachOther(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	release := make(chan struct{})
	q := newQueue(t, pool, func(ctx context.Context, _ pgx.Tx, ev *payments.Event) error {
		if ev.Type == payments.EventPaymentInitiated {
			<-release
		}
		return nil
	}, nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	initiated := []byte(`{"id":"` + storetest.NewEventID(t) + `","event":"payment.initiated","created_at":"` + time.Now().UTC().Format(time.RFC3339) +
		`","data":{"id":"pay-same","reference":"order-same","status":"pending","amount":"10.00","currency":"NGN"}}`)
	completed := []byte(`{"id":"` + storetest.NewEventID(t) + `","event":"payment.completed","created_at":"` + time.Now().UTC().Format(time.RFC3339) +
		`","data":{"id":"pay-same","reference":"order-same","status":"completed","amount":"10.00","currency":"NGN"}}`)
	for _, b := range [][]byte{initiated, completed} {
		if code := storetest.Deliver(h, b); code != http.StatusOK {
			t.Fatalf("delivery: %d", code)
		}
	}
	tracker := q.Tracker()
	eventually(t, time.Minute, "payment.completed committed while payment.initiated's function runs", func() bool {
		o, err := tracker.Get(testCtx(t), "pay-same")
		return err == nil && o.State == "completed"
	})
	close(release)
	eventually(t, time.Minute, "both jobs completed", func() bool { return q.jobStates(t, pool)["completed"] == 2 })
}
