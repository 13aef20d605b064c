package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// ErrJobRescued is returned by a job whose attempt was given up while your
// function ran (River's rescuer took it back after QueueConfig.RescueAfter,
// or it was cancelled): nothing of this attempt commits, and River runs the
// event again. Keep your function well under QueueConfig.JobTimeout.
var ErrJobRescued = errors.New("pgstore: the job's attempt was rescued or cancelled while the function ran; nothing of it was committed and River runs the event again")

// TxEventFunc processes one event inside the transaction that also
// completes the event's River job: its writes and the completion commit
// together, or not at all. Return nil once the event is handled; an error
// rolls its writes back and River runs it again later with back-off. tx
// is a savepoint of the job's transaction: its Commit only releases the
// savepoint, its Rollback undoes your writes alone, and from the moment
// your function returns every call of tx fails with pgx.ErrTxClosed. A
// statement of yours that fails leaves the transaction unusable until you
// roll back (tx.Rollback, or a savepoint of your own): return its error
// rather than nil. ctx is cancelled after QueueConfig.JobTimeout and when
// the process stops its River client.
type TxEventFunc func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error

// EventArgs is the River job of one event: its id, whose body waits in the
// Queue's table, so that River's table and River UI hold no personal data.
// A job with Purge set forgets the ids past QueueConfig.Retention.
type EventArgs struct {
	ID    string `json:"id,omitempty"`
	Purge bool   `json:"purge,omitempty"`
}

// Kind is the River job kind of events.
func (EventArgs) Kind() string { return "payments_webhook_event" }

// Worker is the River worker that runs your function for each event: add
// it to your River client's workers with river.AddWorker, then enqueue
// through Worker.Queue. NewQueue does both for a process without River.
type Worker struct {
	river.WorkerDefaults[EventArgs]
	pool     *pgxpool.Pool
	fn       TxEventFunc
	cfg      QueueConfig
	outcomes *OutcomeStore
	q        queueQueries
}

// NewWorker returns the Worker that runs fn for each event, on pool's
// connections; cfg may be nil. Its errors for a bad configuration match
// ErrInvalidOption.
func NewWorker(pool *pgxpool.Pool, fn TxEventFunc, cfg *QueueConfig) (*Worker, error) {
	if pool == nil || fn == nil {
		return nil, invalid("NewWorker needs a pool and a function to run for each event")
	}
	var c QueueConfig
	if cfg != nil {
		c = *cfg
	}
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	outcomes, err := NewOutcomeStore(pool, WithTable(c.OutcomeTable), WithTimeout(c.Timeout), notifyAfterCommit(), WithLogger(c.Logger))
	if err != nil {
		return nil, err
	}
	return &Worker{pool: pool, fn: fn, cfg: c, outcomes: outcomes, q: buildQueueQueries(c.Table)}, nil
}

func (w *Worker) insertOpts() *river.InsertOpts {
	return &river.InsertOpts{Queue: QueueName, MaxAttempts: w.cfg.MaxAttempts}
}

// Timeout is QueueConfig.JobTimeout, whatever your client's JobTimeout.
func (w *Worker) Timeout(*river.Job[EventArgs]) time.Duration { return w.cfg.JobTimeout }

// Work runs your function for one event in a transaction that also records
// its outcome, completes the job, clears the event's body and commits.
func (w *Worker) Work(ctx context.Context, job *river.Job[EventArgs]) error {
	if job.Args.Purge {
		client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
		if err == nil {
			_, err = w.purge(ctx, client)
		}
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: job %d: begin the job's transaction: %w", job.ID, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.Timeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	ev, err := w.read(ctx, tx, job)
	if err != nil {
		return err
	}
	if err := w.call(ctx, tx, ev); err != nil {
		return err
	}
	o, effect, err := w.outcomes.ApplyTx(ctx, tx, ev)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: record its outcome: %w", shownID(ev.ID), err)
	}
	// The fence: River completes the job only while it is running, under
	// the job row's lock, and returns the row either way. Unless it shows
	// this very attempt completed, the attempt was rescued, cancelled or
	// taken by another worker, and nothing of it may commit
	// (TestQueueRescuedAttemptCommitsNothing).
	done, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: complete the job: %w", shownID(ev.ID), err)
	}
	if done.State != rivertype.JobStateCompleted || done.Attempt != job.Attempt {
		return fmt.Errorf("event %s, job %d attempt %d (now %s, attempt %d): %w", shownID(ev.ID), job.ID, job.Attempt, done.State, done.Attempt, ErrJobRescued)
	}
	// The body is done with: cleared in the same commit.
	if _, err := tx.Exec(ctx, w.q.forget, job.Args.ID); err != nil {
		return fmt.Errorf("pgstore: event %s: clear its body: %w", shownID(ev.ID), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: event %s: commit: %w (nothing of this run is recorded; River runs it again)", shownID(ev.ID), err)
	}
	if effect != outcome.EffectNone && o.State.Final() {
		w.outcomes.sendNotify() // after the commit, never before it
	}
	return nil
}

// read returns the event of job. A job whose row has no body left is one
// whose function already committed (the job was retried from River UI
// after it completed) or whose row was deleted: it is cancelled, and
// nothing runs.
func (w *Worker) read(ctx context.Context, tx pgx.Tx, job *river.Job[EventArgs]) (*payments.Event, error) {
	var body []byte
	err := tx.QueryRow(ctx, w.q.read, job.Args.ID).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && body == nil {
		return nil, river.JobCancel(fmt.Errorf("pgstore: job %d: the event %s has no body in %s: its function already committed, "+
			"or its row was deleted; nothing runs (to process it again, run your function on it yourself)",
			job.ID, shownID(job.Args.ID), w.cfg.Table))
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: job %d: read the event from %s: %w", job.ID, w.cfg.Table, err)
	}
	ev, err := payments.ParseEvent(body)
	if err != nil {
		return nil, river.JobCancel(fmt.Errorf("pgstore: job %d holds no event: %w", job.ID, err))
	}
	return ev, nil
}

// call runs the merchant's function with a handle on a savepoint of tx,
// closes the handle when it returns, and releases the savepoint.
func (w *Worker) call(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: event %s: begin the function's savepoint: %w", shownID(ev.ID), err)
	}
	h := &handle{tx: sp, g: &gate{}, top: true}
	err = w.fn(ctx, h, ev)
	if cerr := h.close(ctx); cerr != nil {
		return fmt.Errorf("pgstore: event %s: your function returned, but %w", shownID(ev.ID), cerr)
	}
	switch {
	case ctx.Err() != nil:
		err = errors.Join(err, ctx.Err())
		return fmt.Errorf("pgstore: event %s: your function's context ended (QueueConfig.JobTimeout, %v, passed, or the process stopped its River client): %w; "+
			"nothing of it was committed and River runs it again with back-off: make the function faster or raise JobTimeout", shownID(ev.ID), w.cfg.JobTimeout, err)
	case err != nil:
		return fmt.Errorf("pgstore: event %s: your function failed: %w; nothing of it was committed and River runs it again with back-off, "+
			"up to QueueConfig.MaxAttempts before it discards the job (River UI or the river CLI shows its errors and retries it)", shownID(ev.ID), err)
	}
	if err := h.release(ctx); err != nil {
		return fmt.Errorf("pgstore: event %s: your function returned nil, but %s failed and left the transaction aborted (releasing its savepoint: %w); "+
			"nothing was committed and River runs it again: after a statement fails, return its error, or roll back to a savepoint of your own (tx.Begin, then its Rollback) and carry on",
			shownID(ev.ID), h.failedStatement(), err)
	}
	return nil
}

// Purge forgets the ids enqueued longer than QueueConfig.Retention ago and
// returns how many, as the Queue's hourly River periodic job does: those
// whose function committed, and those whose job River no longer has
// (River's JobList says). An event whose job River keeps (failing,
// discarded) keeps its id and body, so that River UI can still run it.
func (q *Queue) Purge(ctx context.Context) (int64, error) { return q.w.purge(ctx, q.client) }

func (w *Worker) purge(ctx context.Context, client *river.Client[pgx.Tx]) (total int64, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("pgstore: purge %s: %w", w.cfg.Table, err)
		}
	}()
	retention := w.cfg.Retention.Microseconds()
	for n := int64(PurgeBatch); n == PurgeBatch; total += n {
		tag, err := w.pool.Exec(ctx, w.q.purgeDone, retention, PurgeBatch)
		if err != nil {
			return total, err
		}
		n = tag.RowsAffected()
	}
	for after := int64(0); ; { // the unfinished, by job id
		rows, _ := w.pool.Query(ctx, w.q.unfinished, retention, after, PurgeBatch)
		jobs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		after = jobs[len(jobs)-1]
		kept, err := client.JobList(ctx, river.NewJobListParams().IDs(jobs...).First(len(jobs)))
		if err != nil {
			return total, err
		}
		gone := slices.DeleteFunc(jobs, func(id int64) bool {
			return slices.ContainsFunc(kept.Jobs, func(j *rivertype.JobRow) bool { return j.ID == id })
		})
		tag, err := w.pool.Exec(ctx, w.q.purgeJobs, gone)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
	}
}
