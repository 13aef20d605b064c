package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
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
	// The Queue's own purge runs once at start (then hourly): let it end
	// first, so that the purges counted below are the test's alone (at a
	// load average of 6, it once ran late and took the row this test's
	// second purge expects).
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
