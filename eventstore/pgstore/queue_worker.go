package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// eventArgs is a job: the id of an event in the Queue's table (its
// stored id: see storedID), which holds the body. River's job table, and
// River UI, see no more of the event than that.
type eventArgs struct {
	ID string `json:"id"`
}

func (eventArgs) Kind() string { return "payments_webhook_event" }

type eventWorker struct {
	river.WorkerDefaults[eventArgs]
	q *Queue
}

// Work runs the merchant's function for one event in a transaction that
// also checks the attempt is still this worker's, records the outcome and
// completes the job.
func (w *eventWorker) Work(ctx context.Context, job *river.Job[eventArgs]) error {
	return w.q.work(ctx, job)
}

func (q *Queue) work(ctx context.Context, job *river.Job[eventArgs]) error {
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: job %d: begin the job's transaction: %w", job.ID, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.cfg.Timeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	ev, err := q.read(ctx, tx, job)
	if err != nil {
		return err
	}
	if err := q.call(ctx, tx, ev); err != nil {
		return err
	}
	o, effect, err := q.outcomes.ApplyTx(ctx, tx, ev)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: record its outcome: %w", shownID(ev.ID), err)
	}
	// The completion is the fence: River's update completes the job only
	// while it is running, takes the job row's lock (ordering this commit
	// against the rescuer's and the next attempt's), and returns the row
	// either way. Unless it shows this very attempt completed, the attempt
	// was rescued, cancelled or taken by another worker, and nothing of it
	// may commit (TestQueueRescuedAttemptCommitsNothing).
	done, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: complete the job: %w", shownID(ev.ID), err)
	}
	if done.State != rivertype.JobStateCompleted || done.Attempt != job.Attempt {
		return fmt.Errorf("event %s, job %d attempt %d (now %s, attempt %d): %w", shownID(ev.ID), job.ID, job.Attempt, done.State, done.Attempt, ErrJobRescued)
	}
	// The body is done with: cleared in the same commit, so that the
	// Queue's table keeps no personal data past the function's success.
	if _, err := tx.Exec(ctx, q.q.forget, job.Args.ID); err != nil {
		return fmt.Errorf("pgstore: event %s: clear its body: %w", shownID(ev.ID), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: event %s: commit: %w (nothing of this run is recorded; River runs it again)", shownID(ev.ID), err)
	}
	if effect != outcome.EffectNone && o.State.Final() {
		q.outcomes.notifyCommitted() // after the commit: see afterCommitNotifier
	}
	q.finishedJob()
	return nil
}

// read returns the event of job from the Queue's table. A job whose row has
// no body left is one whose function already committed (the job was
// retried from River UI or the river CLI after it completed) or whose row
// was deleted by hand: it is cancelled, and nothing runs.
func (q *Queue) read(ctx context.Context, tx pgx.Tx, job *river.Job[eventArgs]) (*payments.Event, error) {
	var body []byte
	err := tx.QueryRow(ctx, q.q.read, job.Args.ID).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && body == nil {
		return nil, river.JobCancel(fmt.Errorf("pgstore: job %d: the event %s has no body in %s: its function already committed, "+
			"or its row was deleted; nothing runs (to process an event again, deliver it again after QueueConfig.Retention, or run your function on it yourself)",
			job.ID, shownID(job.Args.ID), q.cfg.Table))
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: job %d: read the event from %s: %w", job.ID, q.cfg.Table, err)
	}
	ev, err := payments.ParseEvent(body)
	if err != nil {
		// A body the handler verified and parsed once cannot fail here;
		// if it does, no retry will cure it.
		return nil, river.JobCancel(fmt.Errorf("pgstore: job %d holds no event: %w", job.ID, err))
	}
	return ev, nil
}

// call runs the merchant's function in a savepoint of tx: its Commit only
// releases the savepoint, so the job's completion always rides the same
// commit, and a use after it returned meets a closed transaction.
func (q *Queue) call(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: begin the function's savepoint: %w", shownID(ev.ID), err)
	}
	if err := q.fn(ctx, sp, ev); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pgstore: event %s: your function was cancelled (QueueConfig.JobTimeout, %v, passed, or the process stopped its Queue): %w; "+
				"nothing of it was committed and River runs it again with back-off: make the function faster or raise JobTimeout (below RescueAfter)",
				shownID(ev.ID), q.jobTimeout(), err)
		}
		return fmt.Errorf("pgstore: event %s: your function failed: %w; nothing of it was committed and River runs it again with back-off, "+
			"up to QueueConfig.MaxAttempts (River's default 25) before it discards the job (River UI or the river CLI shows its errors and retries it)",
			shownID(ev.ID), err)
	}
	return nil
}

// jobTimeout is the JobTimeout in force: the configured one or River's.
func (q *Queue) jobTimeout() time.Duration {
	if q.cfg.JobTimeout > 0 {
		return q.cfg.JobTimeout
	}
	return river.JobTimeoutDefault
}

// purgeArgs is the periodic job that forgets enqueued ids past the retention.
type purgeArgs struct{}

func (purgeArgs) Kind() string { return "payments_webhook_queue_purge" }

type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	q *Queue
}

func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	_, err := w.q.Purge(ctx)
	return err
}

// Purge deletes the ids enqueued longer than the retention ago, in batches
// of PurgeBatch, and returns how many. A started Queue runs it every hour
// (a River periodic job, on one process of the cluster).
func (q *Queue) Purge(ctx context.Context) (int64, error) {
	var total int64
	for {
		tag, err := q.pool.Exec(ctx, q.q.purge, PurgeBatch)
		if err != nil {
			return total, fmt.Errorf("pgstore: purge %s: %w", q.cfg.Table, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < PurgeBatch {
			return total, nil
		}
	}
}

type queueQueries struct {
	create, enqueue, enqueueMany, find, take, peek, read, forget, purge string
}

func buildQueueQueries(table, schema string, retention time.Duration) queueQueries {
	parts := strings.Split(table, ".")
	quoted := `"` + strings.Join(parts, `"."`) + `"`
	last := parts[len(parts)-1]
	jobs := "river_job"
	if schema != "" {
		jobs = `"` + schema + `".river_job`
	}
	enqueue, take, peek := outboxQueries(quoted, jobs)
	return queueQueries{
		// One row per event: its id for the retention, and its body until
		// its function committed (the outbox: queue_outbox.go). The waiting
		// rows, not yet moved into River, have a partial index; the purge
		// finds old rows by a BRIN index, which costs an INSERT next to
		// nothing since rows arrive in enqueued_at order.
		create: `CREATE TABLE IF NOT EXISTS ` + quoted + ` (
    event_id    text        PRIMARY KEY,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    body        bytea,
    moved       boolean     NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS "` + last + `_waiting" ON ` + quoted + ` (enqueued_at) WHERE NOT moved;
CREATE INDEX IF NOT EXISTS "` + last + `_brin" ON ` + quoted + ` USING brin (enqueued_at)`,
		enqueue: enqueue,
		// A gathering (queue_gather.go): the ids already recorded, then
		// the others in one statement, in the order of their ids.
		find: `SELECT event_id FROM ` + quoted + ` WHERE event_id = ANY($1::text[])`,
		enqueueMany: `INSERT INTO ` + quoted + ` (event_id, body) SELECT u.id, u.body FROM unnest($1::text[], $2::bytea[]) AS u(id, body)
WHERE NOT EXISTS (SELECT 1 FROM ` + quoted + ` WHERE event_id = u.id) ORDER BY u.id COLLATE "C" ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
		take:   take,
		peek:   peek,
		read:   `SELECT body FROM ` + quoted + ` WHERE event_id = $1`,
		forget: `UPDATE ` + quoted + ` SET body = NULL WHERE event_id = $1`,
		// An id is forgotten past the retention, but never while its event
		// waits to be moved, however long the workers are down, so that
		// each event is enqueued once; and an event whose function never
		// committed (its job failing, discarded or cancelled) keeps its
		// body while River keeps its job, so that River UI or the river
		// CLI can still run it again (TestQueuePurgeKeepsUnfinishedEvents).
		purge: `DELETE FROM ` + quoted + ` WHERE ctid IN (SELECT ctid FROM ` + quoted + ` o` +
			fmt.Sprintf(` WHERE enqueued_at < now() - interval '%d milliseconds'`, retention.Milliseconds()) +
			` AND moved AND (body IS NULL OR NOT EXISTS (SELECT 1 FROM ` + jobs + ` j WHERE j.kind = '` + eventArgs{}.Kind() +
			`' AND j.args @> jsonb_build_object('id', o.event_id))) LIMIT $1)`,
	}
}

func (q *Queue) migrate(ctx context.Context) error {
	conn, err := q.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer conn.Release()
	// One migration at a time across processes: River's own migrations
	// are not safe to run concurrently.
	const lock = `SELECT pg_advisory_lock(hashtext('payments-go pgstore migrate queue'))`
	if _, err := conn.Exec(ctx, lock); err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.cfg.Timeout)
		defer cancel()
		_, _ = conn.Exec(uctx, `SELECT pg_advisory_unlock(hashtext('payments-go pgstore migrate queue'))`)
	}()
	m, err := rivermigrate.New(riverpgxv5.New(q.pool), &rivermigrate.Config{Schema: q.cfg.Schema, Logger: q.riverLogger()})
	if err != nil {
		return fmt.Errorf("pgstore: migrate River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("pgstore: migrate River's tables: %w", err)
	}
	for _, stmt := range strings.Split(q.q.create, ";\n") {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: migrate %s: %w", q.cfg.Table, err)
		}
	}
	return q.outcomes.Migrate(ctx)
}
