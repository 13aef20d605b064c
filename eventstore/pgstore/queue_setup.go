package pgstore

// The Queue's types and set-up; one event's way through it is queue.go.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// Queue is the recommended way to receive webhooks on PostgreSQL: give
// Enqueue to webhook.NewQueueHandler; River workers, in any number of
// processes, run your function (a Worker) in the transaction that records
// the event's outcome and completes its job, so that its writes commit
// exactly once. NewQueue makes its own River client; with yours:
//
//	w, err := pgstore.NewWorker(pool, bookOrder, nil)
//	river.AddWorker(workers, w)                      // workers: your river.Config's
//	client, err := river.NewClient(riverpgxv5.New(pool), config)
//	q, err := w.Queue(client)
type Queue struct {
	w      *Worker
	client *river.Client[pgx.Tx]
}

// TxEventFunc processes one event in the transaction that also completes
// its River job: return nil once it is handled; an error rolls its writes
// back and River runs it again with back-off. tx is a savepoint of that
// transaction, and every call of it fails with pgx.ErrTxClosed from the
// moment your function returns. After a statement of yours fails, return
// its error or roll back to a savepoint of your own. ctx ends after
// QueueConfig.JobTimeout and when the River client stops.
type TxEventFunc func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error

// ErrJobRescued fails an attempt that River gave up while your function ran
// (rescued after QueueConfig.RescueAfter, or cancelled): nothing of it
// commits, and River runs the event again.
var ErrJobRescued = errors.New("pgstore: the job's attempt was rescued or cancelled while the function ran; nothing of it was committed and River runs the event again")

// Worker is the River worker that runs your function for each event: add
// it to your River client's workers (river.AddWorker), then enqueue
// through Worker.Queue. NewQueue does both.
type Worker struct {
	river.WorkerDefaults[EventArgs]
	pool     *pgxpool.Pool
	fn       TxEventFunc
	cfg      QueueConfig
	table    string // cfg.Table, quoted
	outcomes *OutcomeStore
}

// The Queue's table, its jobs' River queue, and QueueConfig's defaults: a
// dead worker's job runs again within about a minute and a half.
const (
	DefaultQueueTable  = "payments_webhook_queue"
	QueueName          = "payments_webhooks"
	DefaultWorkers     = 10
	DefaultJobTimeout  = 30 * time.Second
	DefaultRescueAfter = time.Minute
)

// QueueConfig configures a Queue and its Worker; the zero value is the
// recommended set-up. Each field's default is in parentheses.
type QueueConfig struct {
	Workers      int           // jobs NewQueue's River client runs at once, each on a pool connection (DefaultWorkers)
	JobTimeout   time.Duration // bounds one run of your function (DefaultJobTimeout)
	RescueAfter  time.Duration // when NewQueue's client runs a dead worker's job again (DefaultRescueAfter; over JobTimeout); give your client the same RescueStuckJobsAfter
	MaxAttempts  int           // runs of a failing event before River discards its job (River's, 25, over about three weeks)
	Retention    time.Duration // how long an event id is remembered (DefaultRetention, at least MinRetention)
	Timeout      time.Duration // bounds each Enqueue, from the wait for a connection to the commit (DefaultTimeout; TestQueueFrozenDatabase)
	Table        string        // the Queue's table (DefaultQueueTable): [a-z_][a-z0-9_]*, optionally schema-qualified
	OutcomeTable string        // the outcome table (DefaultOutcomeTable), named likewise
	Schema       string        // River's schema for NewQueue's client (the search_path); yours uses its own
	Logger       *slog.Logger  // River's log lines and the Queue's (none)
}

func (c QueueConfig) withDefaults() (QueueConfig, error) {
	c.Workers, c.JobTimeout = cmp.Or(c.Workers, DefaultWorkers), cmp.Or(c.JobTimeout, DefaultJobTimeout)
	c.RescueAfter = cmp.Or(c.RescueAfter, max(DefaultRescueAfter, c.JobTimeout+30*time.Second))
	c.Retention, c.Timeout = cmp.Or(c.Retention, DefaultRetention), cmp.Or(c.Timeout, DefaultTimeout)
	c.Table, c.OutcomeTable = cmp.Or(c.Table, DefaultQueueTable), cmp.Or(c.OutcomeTable, DefaultOutcomeTable)
	switch {
	case c.Workers < 0, c.JobTimeout < 0, c.MaxAttempts < 0, c.Timeout < 0:
		return c, invalid("QueueConfig: Workers, JobTimeout, MaxAttempts and Timeout must not be negative")
	case c.RescueAfter <= c.JobTimeout:
		return c, invalid("QueueConfig.RescueAfter %v must be longer than JobTimeout %v: a job is rescued only once its run has surely ended", c.RescueAfter, c.JobTimeout)
	case c.Retention < MinRetention:
		return c, invalid("QueueConfig.Retention %v: at least %v (twice the signature tolerance)", c.Retention, MinRetention)
	case c.Schema != "" && !identPart.MatchString(c.Schema):
		return c, invalid("QueueConfig.Schema %q: lower-case letters, digits and underscores", c.Schema)
	}
	return c, checkTable(c.Table)
}

// NewQueue returns a Queue on a River client of its own, which works
// QueueConfig.Workers jobs at once once started; cfg may be nil. Its
// errors for a bad configuration match ErrInvalidOption.
func NewQueue(pool *pgxpool.Pool, fn TxEventFunc, cfg *QueueConfig) (*Queue, error) {
	w, err := NewWorker(pool, fn, cfg)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{QueueName: {MaxWorkers: w.cfg.Workers}},
		Workers:              workers,
		JobTimeout:           w.cfg.JobTimeout,
		RescueStuckJobsAfter: w.cfg.RescueAfter,
		Schema:               w.cfg.Schema,
		Logger:               cmp.Or(w.cfg.Logger, slog.New(slog.DiscardHandler)), // River's own logs to stdout
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	return w.Queue(client)
}

// NewWorker returns the Worker that runs fn for each event, on pool's
// connections; cfg may be nil. Its errors for a bad configuration match
// ErrInvalidOption.
func NewWorker(pool *pgxpool.Pool, fn TxEventFunc, cfg *QueueConfig) (*Worker, error) {
	if pool == nil || fn == nil {
		return nil, invalid("NewWorker needs a pool and a function to run for each event")
	}
	c, err := cmp.Or(cfg, &QueueConfig{}).withDefaults()
	if err != nil {
		return nil, err
	}
	outcomes, err := NewOutcomeStore(pool, WithTable(c.OutcomeTable), WithTimeout(c.Timeout), notifyAfterCommit(), WithLogger(c.Logger))
	if err != nil {
		return nil, err
	}
	table := pgx.Identifier(strings.Split(c.Table, ".")).Sanitize()
	return &Worker{pool: pool, fn: fn, cfg: c, table: table, outcomes: outcomes}, nil
}

// Queue returns the Queue that enqueues events for w on client, whose
// Workers hold w. A client that works QueueName also gets the hourly job
// that forgets ids past QueueConfig.Retention.
func (w *Worker) Queue(client *river.Client[pgx.Tx]) (*Queue, error) {
	if client == nil {
		return nil, invalid("Worker.Queue needs a River client")
	}
	func() {
		defer func() { _ = recover() }() // River panics on a client that only inserts
		_, _ = client.PeriodicJobs().AddSafely(river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) {
				return EventArgs{Purge: true}, &river.InsertOpts{Queue: QueueName}
			},
			&river.PeriodicJobOpts{ID: EventArgs{}.Kind() + "_purge", RunOnStart: true}))
	}()
	return &Queue{w: w, client: client}, nil
}

// Reconcile enqueues the listed events as deliveries do:
//
//	res, err := q.Reconcile(ctx, client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: checkpoint}))
//
// Enqueued counts the events it enqueued, AlreadyDone those enqueued
// before; it stops at the first error and returns it with what it did.
func (q *Queue) Reconcile(ctx context.Context, events iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error) {
	var res webhook.ReconcileResult
	for ev, err := range events {
		if err != nil {
			return res, fmt.Errorf("pgstore: reconcile: listing events: %w", err)
		}
		inserted, err := q.enqueue(ctx, ev)
		switch {
		case err != nil:
			res.Failed, res.FailedIDs = res.Failed+1, append(res.FailedIDs, ev.ID)
			return res, err
		case inserted:
			res.Enqueued++
		default:
			res.AlreadyDone++
		}
		res.Checkpoint = webhook.Checkpoint{ID: ev.ID, CreatedAt: ev.CreatedAt}
	}
	return res, nil
}

// Tracker returns an outcome tracker on the Queue's outcome table, whose
// Await returns once the deciding event's function committed, in any
// process. Events Await lists are enqueued like deliveries.
func (q *Queue) Tracker(opts ...outcome.Option) *outcome.Tracker {
	return outcome.NewTracker(q.w.outcomes, append(slices.Clip(opts), outcome.WithReconcile(q.Reconcile))...)
}

// Start works the queue's jobs until Stop; ctx ending cancels running
// functions, so pass context.WithoutCancel(ctx) and Stop on shutdown.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("pgstore: start the queue's workers: %w (was Migrate run?)", err)
	}
	return nil
}

// Stop stops taking jobs and waits for the running ones until ctx ends;
// what did not commit then runs again in another worker.
func (q *Queue) Stop(ctx context.Context) error { return q.client.Stop(ctx) }

// Purge forgets the ids enqueued longer than QueueConfig.Retention ago, as
// the hourly job does, and returns how many: those whose function
// committed, and those whose job River no longer has (River's JobList).
func (q *Queue) Purge(ctx context.Context) (int64, error) { return q.w.purge(ctx, q.client) }

func (w *Worker) purge(ctx context.Context, client *river.Client[pgx.Tx]) (total int64, err error) {
	// An old row goes once its function committed (no body), or once no
	// event job River keeps holds its id (but completed ones: no body).
	kept := []string{} // not nil: <> ALL(NULL) would keep every row
	params := river.NewJobListParams().Kinds(EventArgs{}.Kind()).First(PurgeBatch).States(slices.DeleteFunc(rivertype.JobStates(), func(s rivertype.JobState) bool { return s == rivertype.JobStateCompleted })...)
	for {
		res, err := client.JobList(ctx, params)
		if err != nil {
			return 0, fmt.Errorf("pgstore: purge %s: list the unfinished events' jobs (River's JobList): %w", w.cfg.Table, err)
		}
		for _, j := range res.Jobs {
			var args EventArgs
			if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
				return 0, fmt.Errorf("pgstore: purge %s: job %d: %w", w.cfg.Table, j.ID, err)
			}
			kept = append(kept, args.ID)
		}
		if len(res.Jobs) < PurgeBatch {
			break
		}
		params = params.After(res.LastCursor)
	}
	for n := int64(PurgeBatch); n == PurgeBatch; total += n {
		tag, err := w.pool.Exec(ctx, `DELETE FROM `+w.table+` WHERE ctid IN (SELECT ctid FROM `+w.table+` WHERE enqueued_at < now() - $1::bigint * interval '1 microsecond'
AND (body IS NULL OR event_id <> ALL($3)) LIMIT $2)`, w.cfg.Retention.Microseconds(), PurgeBatch, kept)
		if err != nil {
			return total, fmt.Errorf("pgstore: purge %s: %w", w.cfg.Table, err)
		}
		n = tag.RowsAffected()
	}
	return total, nil
}

// Migrate creates or upgrades River's tables (in the River client's
// schema), the Queue's table and the outcome table. It is idempotent, safe
// to run from every process at once, and bounded by ctx alone.
func (q *Queue) Migrate(ctx context.Context) error {
	conn, err := q.w.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer conn.Release()
	// One process at a time: River's migrations are not safe concurrently.
	const lock = `(hashtext('payments-go pgstore migrate queue'))`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock`+lock); err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock`+lock) }()
	m, err := rivermigrate.New(riverpgxv5.New(q.w.pool), &rivermigrate.Config{Schema: q.client.Schema(), Logger: q.w.cfg.Logger})
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		return fmt.Errorf("pgstore: migrate River's tables: %w", err)
	}
	for _, stmt := range strings.Split(q.w.createSQL(), ";\n") {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: migrate %s: %w", q.w.cfg.Table, err)
		}
	}
	return q.w.outcomes.Migrate(ctx)
}

// MigrationSQL returns the statements that create the Queue's own tables
// (not River's), for a DBA to apply by hand; River's are river migrate-up's.
func (q *Queue) MigrationSQL() string { return q.w.createSQL() + ";\n" + q.w.outcomes.MigrationSQL() }

// createSQL creates the Queue's table; a BRIN index, which costs an INSERT
// next to nothing, finds old rows for the purge.
func (w *Worker) createSQL() string {
	name := w.cfg.Table[strings.LastIndex(w.cfg.Table, ".")+1:]
	return `CREATE TABLE IF NOT EXISTS ` + w.table + ` (
    event_id    text        PRIMARY KEY,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    body        bytea
);
CREATE INDEX IF NOT EXISTS ` + pgx.Identifier{name + "_brin"}.Sanitize() + ` ON ` + w.table + ` USING brin (enqueued_at)`
}
