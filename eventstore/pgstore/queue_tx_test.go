package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// A function whose goroutines use its tx as it returns, 1,000 times: every
// call they start after the worker saw the return is refused with
// pgx.ErrTxClosed and writes nothing; an attempt during which one was
// still running fails with the reason and runs again; no attempt is broken
// otherwise (no "conn busy"), each event's own row commits once, and every
// connection goes back to the pool (it closes at once). A goroutine's call
// that starts and ends in the instant between the function's return
// statement and the worker closing the handle cannot be told from a call
// made before the return (Go cannot see which came first), so it is part
// of the attempt like any other: only such calls, which returned nil, may
// have left a late row (CI saw 2 of 3,000 once, under -race at load 5).
func TestQueueTxIsRefusedTheMomentTheFunctionReturns(t *testing.T) {
	t.Parallel()
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	pool := newPool(t, testPoolURL(t), 16)
	const events, goroutines = 1000, 3
	var refused, busy, other, succeeded atomic.Int64
	var late sync.WaitGroup
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insertPaid(paid)(ctx, tx, ev); err != nil {
			return err
		}
		returned := make(chan struct{})
		for range goroutines {
			late.Add(1)
			go func() {
				defer late.Done()
				<-returned
				_, err := tx.Exec(context.Background(), "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'late')", ev.ID)
				switch {
				case errors.Is(err, pgx.ErrTxClosed):
					refused.Add(1)
				case err != nil && strings.Contains(err.Error(), "busy with another call"):
					busy.Add(1) // three goroutines on one connection
				case err == nil:
					succeeded.Add(1) // entered before the worker closed the handle
					other.Add(1)
				default:
					other.Add(1)
				}
			}()
		}
		close(returned)
		return nil
	}, &pgstore.QueueConfig{Workers: 8})
	start(t, q.Queue)
	enqueueEvents(t, q, events)
	eventually(t, 10*time.Minute, "every job completed", func() bool { return q.jobStates(t, admin)["completed"] == events })
	late.Wait()
	var lateRows int
	if err := admin.QueryRow(testCtx(t), "SELECT count(*) FROM "+paid+" WHERE reference = 'late'").Scan(&lateRows); err != nil || int64(lateRows) > succeeded.Load() {
		t.Errorf("%d rows written by late calls (%v), but only %d late calls were let in: a refused call wrote", lateRows, err, succeeded.Load())
	}
	if n := rowsOf(t, admin, paid, ""); n != events+lateRows {
		t.Errorf("%d rows, want %d: one per event, plus the %d of late calls let in before the handle closed", n, events+lateRows, lateRows)
	}
	for _, j := range q.jobs(t) {
		for _, e := range j.Errors {
			if !strings.Contains(e.Error, "still running when it returned") {
				t.Errorf("job %d attempt %d failed: %s", j.ID, e.Attempt, e.Error)
			}
		}
	}
	t.Logf("%d late calls refused, %d ran before the return was seen (their attempts failed and ran again), %d found another running", refused.Load(), other.Load(), busy.Load())
	if refused.Load() == 0 {
		t.Error("no late call was refused")
	}
	if err := q.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// River lets go of its own (its listener's) as it winds down.
	eventually(t, time.Minute, "every connection back in the pool after the workers stopped", func() bool { return pool.Stat().AcquiredConns() == 0 })
	closed := make(chan struct{})
	go func() { pool.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("the pool did not close within a minute: a connection leaked")
	}
}

// A function that swallows a failed statement (a unique violation: "already
// booked") and returns nil has its attempt failed with an error that names
// the statement and says what to do; nothing of it commits. Rolled back to a
// savepoint of its own, the same function commits.
func TestQueueSwallowedFailureIsNamed(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	if _, err := pool.Exec(testCtx(t), "CREATE UNIQUE INDEX ON "+paid+" (reference)"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(testCtx(t), "INSERT INTO "+paid+" (event_id, reference) VALUES ('booked', 'order-1')"); err != nil {
		t.Fatal(err)
	}
	var savepoint atomic.Bool
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if savepoint.Load() {
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := sp.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'order-1')", ev.ID); err != nil {
				return sp.Rollback(ctx) // already booked: fine
			}
			return sp.Commit(ctx)
		}
		_, _ = tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'order-1')", ev.ID) // swallowed
		return nil
	}, &pgstore.QueueConfig{MaxAttempts: 1})
	start(t, q.Queue)
	id := enqueueEvents(t, q, 1)[0]
	eventually(t, time.Minute, "the job discarded", func() bool { return q.jobStates(t, pool)["discarded"] == 1 })
	j := q.jobOf(t, id)
	msg := j.Errors[len(j.Errors)-1].Error
	for _, want := range []string{"INSERT INTO " + paid, "23505", "roll back to a savepoint of your own", "return its error"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the attempt's error %q does not say %q", msg, want)
		}
	}
	if body, _ := q.bodyOf(t, id); body == nil {
		t.Error("the event's body was cleared: the failed attempt committed")
	}
	savepoint.Store(true)
	if _, err := q.Client().JobRetry(testCtx(t), j.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the retried job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
}

// A receiver whose River client only inserts (no Queues, no Workers: River
// refuses periodic jobs on it) still gets a Queue: its Enqueue inserts the
// job that a working client's Worker then runs.
func TestQueueOnAnInsertOnlyClient(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	q := newQueue(t, pool, insertPaid(paid), nil)
	w, err := pgstore.NewWorker(pool, insertPaid(paid), &q.cfg)
	if err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: q.schema})
	if err != nil {
		t.Fatal(err)
	}
	receiver, err := w.Queue(client)
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvents(t, 1)[0]
	if err := receiver.Enqueue(testCtx(t), ev); err != nil {
		t.Fatal(err)
	}
	start(t, q.Queue)
	eventually(t, time.Minute, "the event booked", func() bool { return rowsOf(t, pool, paid, ev.ID) == 1 })
}
