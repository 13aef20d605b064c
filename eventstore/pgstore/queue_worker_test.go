package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// bodyOf returns the body the Queue's table holds for id, and whether it
// holds a row for id at all.
func (q *testQueue) bodyOf(tb testing.TB, id string) ([]byte, bool) {
	tb.Helper()
	var body []byte
	err := sharedPool(tb).QueryRow(testCtx(tb), "SELECT body FROM "+q.table+" WHERE event_id = $1", id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false
	}
	if err != nil {
		tb.Fatal(err)
	}
	return body, true
}

// jobOf returns the queue's job for the event id, as River's API lists it.
func (q *testQueue) jobOf(tb testing.TB, id string) *rivertype.JobRow {
	tb.Helper()
	for _, j := range q.jobs(tb) {
		var args pgstore.EventArgs
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			tb.Fatal(err)
		}
		if args.ID == id {
			return j
		}
	}
	tb.Fatalf("no job for event %s", id)
	return nil
}

// enqueueEvents enqueues n new events and returns their ids.
func enqueueEvents(tb testing.TB, q *testQueue, n int) []string {
	tb.Helper()
	var ids []string
	for _, ev := range newEvents(tb, n) {
		if err := q.Enqueue(testCtx(tb), ev); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// River's job holds the event's id and nothing else of it, so River UI
// shows no personal data; the body stays in the Queue's table for as long
// as the function has not committed (a failed attempt's retry reads it
// again, byte for byte), and the commit that completes the job clears it.
func TestQueueJobHoldsOnlyTheEventID(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	id := storetest.NewEventID(t)
	sent := storetest.EventBody(id)
	var attempts atomic.Int64
	retrying, release := make(chan struct{}), make(chan struct{})
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if string(ev.RawJSON()) != string(sent) {
			t.Errorf("attempt %d: the function got %s, want the body the service sent, %s", attempts.Load()+1, ev.RawJSON(), sent)
		}
		if err := insertPaid(paid)(ctx, tx, ev); err != nil {
			return err
		}
		if attempts.Add(1) == 1 {
			return errors.New("the ERP is down")
		}
		close(retrying)
		<-release
		return nil
	}, nil)
	start(t, q.Queue)
	if code := storetest.Deliver(webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), sent); code != http.StatusOK {
		t.Fatalf("delivery: %d", code)
	}
	within(t, retrying, "the retry running") // River's first retry comes about a second after the failure
	if body, ok := q.bodyOf(t, id); !ok || string(body) != string(sent) {
		t.Errorf("while the retry runs the table holds %q (row: %v), want the body", body, ok)
	}
	if args, want := string(q.jobOf(t, id).EncodedArgs), `{"id": "`+id+`"}`; args != want {
		t.Errorf("River's job args are %s, want %s: the event's body is in River's table", args, want)
	}
	close(release)
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	if body, ok := q.bodyOf(t, id); !ok || body != nil {
		t.Errorf("after the function committed the table holds %q (row: %v), want the id with no body", body, ok)
	}
	if n := rowsOf(t, pool, paid, id); n != 1 || attempts.Load() != 2 {
		t.Errorf("%d rows after %d attempts, want 1 after 2", n, attempts.Load())
	}
}

// A completed job retried by hand (River UI's or the river CLI's retry)
// finds no body: it is cancelled with the reason, and the function does
// not run a second time.
func TestQueueCompletedJobRetriedRunsNothing(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		return insertPaid(paid)(ctx, tx, ev)
	}, nil)
	start(t, q.Queue)
	id := enqueueEvents(t, q, 1)[0]
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	// River UI's retry of a completed job.
	job := q.jobOf(t, id)
	if _, err := q.Client().JobRetry(testCtx(t), job.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the retried job was cancelled", func() bool { return q.jobStates(t, pool)["cancelled"] == 1 })
	job, err := q.Client().JobGet(testCtx(t), job.ID)
	if err != nil || len(job.Errors) == 0 {
		t.Fatalf("the cancelled job: %v, %v; want its error", job, err)
	}
	if last, want := job.Errors[len(job.Errors)-1].Error, "its function already committed"; !strings.Contains(last, want) {
		t.Errorf("the cancelled job's error is %q, want it to say %q", last, want)
	}
	if n := rowsOf(t, pool, paid, id); n != 1 || calls.Load() != 1 {
		t.Errorf("%d rows after %d calls, want 1 after 1", n, calls.Load())
	}
}

// The purge forgets an event past the retention once its function
// committed, but an event whose job never completed (here discarded after
// its only attempt) keeps its id and body for as long as River keeps the
// job, so that River UI or the river CLI can still run it; once River's
// cleaner deleted the job, the purge forgets it too.
func TestQueuePurgeKeepsUnfinishedEvents(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	done, failed := storetest.NewEventID(t), storetest.NewEventID(t)
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if ev.ID == failed {
			return errors.New("the ERP refuses this order")
		}
		return nil
	}, &pgstore.QueueConfig{MaxAttempts: 1})
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	for _, id := range []string{done, failed} {
		if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
			t.Fatalf("delivery: %d", code)
		}
	}
	eventually(t, time.Minute, "one job completed and one discarded", func() bool {
		s := q.jobStates(t, pool)
		return s["completed"] == 1 && s["discarded"] == 1
	})
	q.waitStartPurge(t)
	if _, err := pool.Exec(testCtx(t), "UPDATE "+q.table+" SET enqueued_at = now() - interval '30 days'"); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Purge(testCtx(t)); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1, the completed event", n, err)
	}
	if _, ok := q.bodyOf(t, done); ok {
		t.Error("the completed event's id survived the purge")
	}
	if body, ok := q.bodyOf(t, failed); !ok || body == nil {
		t.Fatalf("the discarded event's row: %v, body %q; want it kept with its body while River keeps the job", ok, body)
	}
	// River's cleaner deletes a discarded job after its retention.
	if _, err := q.Client().JobDelete(testCtx(t), q.jobOf(t, failed).ID); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Purge(testCtx(t)); err != nil || n != 1 {
		t.Fatalf("purge after River deleted the job: %d, %v; want 1", n, err)
	}
}

// The purge finds unfinished events through River's JobList alone, on a
// table with no job id (and on an old one that still has the column,
// unused): past the retention it forgets an event whose function
// committed and one whose job River no longer has, and keeps, with its
// body, one whose job still retries.
func TestQueuePurgeAsksRiverWhichEventsAreUnfinished(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	done, retrying, orphan := storetest.NewEventID(t), storetest.NewEventID(t), storetest.NewEventID(t)
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if ev.ID == retrying {
			return errors.New("the ERP is down")
		}
		return nil
	}, nil)
	rows, _ := pool.Query(testCtx(t), "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", q.table)
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(columns, " ") != "event_id enqueued_at body" {
		t.Fatalf("the Queue's table has the columns %v (%v), want event_id enqueued_at body", columns, err)
	}
	// A table made by an earlier build of the Queue kept each job's id.
	if _, err := pool.Exec(testCtx(t), "ALTER TABLE "+q.table+" ADD COLUMN job_id bigint"); err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	for _, id := range []string{done, retrying} {
		if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
			t.Fatalf("delivery: %d", code)
		}
	}
	// An event whose job River deleted: its row, and no job.
	if _, err := pool.Exec(testCtx(t), "INSERT INTO "+q.table+" (event_id, body) VALUES ($1, $2)", orphan, storetest.EventBody(orphan)); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "one job completed and one failed once", func() bool {
		return q.jobStates(t, pool)["completed"] == 1 && len(q.jobOf(t, retrying).Errors) > 0
	})
	q.waitStartPurge(t)
	if _, err := pool.Exec(testCtx(t), "UPDATE "+q.table+" SET enqueued_at = now() - interval '30 days'"); err != nil {
		t.Fatal(err)
	}
	n, err := q.Purge(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{done: false, orphan: false, retrying: true} {
		if body, ok := q.bodyOf(t, id); ok != want || want && body == nil {
			t.Errorf("after the purge the row of %s: %v (body %q), want it kept %v", id, ok, body, want)
		}
	}
	if n != 2 {
		t.Errorf("the purge forgot %d ids, want 2", n)
	}
}

// Two jobs of one event (River UI's retry of a job that is running, say)
// run one after the other: the second waits for the row the first holds,
// without calling the function, and once the first committed it finds no
// body and is cancelled; the function ran once.
func TestQueueSecondJobOfAnEventWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	running, release := make(chan struct{}), make(chan struct{})
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if calls.Add(1) == 1 {
			close(running)
			<-release
		}
		return insertPaid(paid)(ctx, tx, ev)
	}, nil)
	start(t, q.Queue)
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let) // before the workers stop, should the test fail
	id := enqueueEvents(t, q, 1)[0]
	within(t, running, "the first job's function running")
	second, err := q.Client().Insert(testCtx(t), pgstore.EventArgs{ID: id}, &river.InsertOpts{Queue: pgstore.QueueName})
	if err != nil {
		t.Fatal(err)
	}
	// The second job's read waits for the first's row lock.
	eventually(t, time.Minute, "the second job waiting for the event's row", func() bool {
		var waiting bool
		if err := pool.QueryRow(testCtx(t), "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1)",
			"SELECT body FROM %"+q.schema+"%").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting || calls.Load() > 1
	})
	if n := calls.Load(); n != 1 {
		t.Fatalf("the function ran %d times while the first job held the event, want once", n)
	}
	let()
	eventually(t, time.Minute, "the first job completed and the second cancelled", func() bool {
		s := q.jobStates(t, pool)
		return s["completed"] == 1 && s["cancelled"] == 1
	})
	if j, err := q.Client().JobGet(testCtx(t), second.Job.ID); err != nil || j.State != rivertype.JobStateCancelled {
		t.Errorf("the second job: %v, %v; want it cancelled", j, err)
	}
	if n := rowsOf(t, pool, paid, id); n != 1 || calls.Load() != 1 {
		t.Errorf("%d rows after %d calls, want 1 after 1", n, calls.Load())
	}
}

// waitStartPurge waits for the purge a started Queue runs at once (then
// hourly), so that the purges a test counts are its own: at a load average
// of 6 it once ran late and took a row a test's purge expected.
func (q *testQueue) waitStartPurge(t *testing.T) {
	t.Helper()
	eventually(t, time.Minute, "the Queue's purge at start done", func() bool {
		res, err := q.Client().JobList(testCtx(t), river.NewJobListParams().Kinds(pgstore.EventArgs{}.Kind()).States(rivertype.JobStateCompleted))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			if strings.Contains(string(j.EncodedArgs), `"purge"`) {
				return true
			}
		}
		return false
	})
}
