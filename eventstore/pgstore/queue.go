package pgstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// DefaultQueueTable is the Queue's table of event ids and bodies.
const DefaultQueueTable = "payments_webhook_queue"

// QueueName is the River queue of the events' jobs.
const QueueName = "payments_webhooks"

// Defaults of QueueConfig: DefaultWorkers jobs at once in a process whose
// River client NewQueue made; each run of your function cancelled after
// DefaultJobTimeout; a job still running DefaultRescueAfter after its run
// began (its worker died) run again by River, whose rescuer looks every
// 30 s: within about a minute and a half (at least River's JobTimeout, 1
// minute, which a River client of yours refuses to go under).
const (
	DefaultWorkers     = 10
	DefaultJobTimeout  = 30 * time.Second
	DefaultRescueAfter = time.Minute
)

// QueueConfig configures a Queue and its Worker. The zero value is the
// recommended set-up.
type QueueConfig struct {
	// Workers is how many events NewQueue's River client runs at once
	// (default DefaultWorkers), each holding a pool connection.
	Workers int
	// JobTimeout bounds one run of your function (default
	// DefaultJobTimeout); River runs it again with back-off.
	JobTimeout time.Duration
	// RescueAfter is when NewQueue's River client runs again a job whose
	// worker died (default DefaultRescueAfter, over JobTimeout); give
	// yours the same RescueStuckJobsAfter.
	RescueAfter time.Duration
	// MaxAttempts is how many times River runs a failing event before it
	// discards the job (default River's, 25, over about three weeks).
	MaxAttempts int
	// Retention is how long an event id is remembered (default
	// DefaultRetention, at least MinRetention).
	Retention time.Duration
	// Timeout bounds each Enqueue, from the wait for a connection to the
	// commit (default DefaultTimeout; TestQueueFrozenDatabase).
	Timeout time.Duration
	// Table (default DefaultQueueTable) and OutcomeTable (default
	// DefaultOutcomeTable): [a-z_][a-z0-9_]*, optionally schema-qualified.
	Table, OutcomeTable string
	// Schema is River's schema for NewQueue's client (default: the
	// search_path); a Queue on your client uses your client's.
	Schema string
	// Logger receives River's log lines and the Queue's (default: none).
	Logger *slog.Logger
}

func (c QueueConfig) withDefaults() (QueueConfig, error) {
	c.Workers = defaulted(c.Workers, DefaultWorkers)
	c.JobTimeout = defaulted(c.JobTimeout, DefaultJobTimeout)
	c.RescueAfter = defaulted(c.RescueAfter, max(DefaultRescueAfter, c.JobTimeout+30*time.Second))
	c.Retention = defaulted(c.Retention, DefaultRetention)
	c.Timeout = defaulted(c.Timeout, DefaultTimeout)
	c.Table = defaulted(c.Table, DefaultQueueTable)
	c.OutcomeTable = defaulted(c.OutcomeTable, DefaultOutcomeTable)
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

func defaulted[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Queue is the recommended way to receive webhooks on PostgreSQL: the
// handler verifies a delivery and calls Enqueue, which records the event
// and inserts its River job in one transaction, and answers; River workers,
// in any number of processes, run your function (a Worker) in a
// transaction that also records the event's outcome and completes the
// job, so that its writes happen exactly once. With a River client of
// your own:
//
//	w, err := pgstore.NewWorker(pool, bookOrder, nil)
//	river.AddWorker(workers, w)                      // workers: your river.Config's
//	client, err := river.NewClient(riverpgxv5.New(pool), config)
//	q, err := w.Queue(client)
//
// Without one, NewQueue makes one with production defaults. Every path
// into the queue is Enqueue: a delivery, Reconcile, the Tracker's Await
// fallback, and payments listen (through the handler).
type Queue struct {
	w      *Worker
	client *river.Client[pgx.Tx]
}

// NewQueue returns a Queue on a River client of its own, which works
// QueueConfig.Workers jobs at once once Start is called, and rescues a
// dead worker's jobs after RescueAfter; cfg may be nil. It does not touch
// the database: run Migrate. Its errors for a bad configuration match
// ErrInvalidOption.
func NewQueue(pool *pgxpool.Pool, fn TxEventFunc, cfg *QueueConfig) (*Queue, error) {
	w, err := NewWorker(pool, fn, cfg)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	logger := w.cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler) // River's own default writes to stdout
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{QueueName: {MaxWorkers: w.cfg.Workers}},
		Workers:              workers,
		JobTimeout:           w.cfg.JobTimeout,
		RescueStuckJobsAfter: w.cfg.RescueAfter,
		Schema:               w.cfg.Schema,
		Logger:               logger,
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	return w.Queue(client)
}

// Queue returns the Queue that enqueues events for w on client, a River
// client whose Workers hold w (river.AddWorker). When client works jobs
// (its Config.Queues lists QueueName), it also gets the hourly job that
// forgets ids past QueueConfig.Retention.
func (w *Worker) Queue(client *river.Client[pgx.Tx]) (*Queue, error) {
	if client == nil {
		return nil, invalid("Worker.Queue needs a River client")
	}
	addPurge(client)
	return &Queue{w: w, client: client}, nil
}

// addPurge adds the purge to client's periodic jobs; River refuses them
// (it panics) on a client that only inserts, which needs none.
func addPurge(client *river.Client[pgx.Tx]) {
	defer func() { _ = recover() }()
	_, _ = client.PeriodicJobs().AddSafely(river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) {
			return EventArgs{Purge: true}, &river.InsertOpts{Queue: QueueName}
		},
		&river.PeriodicJobOpts{ID: EventArgs{}.Kind() + "_purge", RunOnStart: true}))
}

// Enqueue records ev unless its id was enqueued within the retention, in
// one transaction: the event's id and body into the Queue's table (INSERT
// ... ON CONFLICT DO NOTHING), and, only if it is new, its River job
// (InsertTx) with the id alone as arguments. A duplicate writes nothing.
// It is the function to give the webhook handler. Its errors wrap
// webhook.ErrUnavailable: the handler answers 503 and the service
// delivers the event again.
func (q *Queue) Enqueue(ctx context.Context, ev *payments.Event) error {
	_, err := q.enqueue(ctx, ev)
	return err
}

// enqueue reports whether it inserted the event.
func (q *Queue) enqueue(ctx context.Context, ev *payments.Event) (bool, error) {
	if ev == nil || ev.ID == "" || len(ev.RawJSON()) == 0 {
		return false, fmt.Errorf("pgstore: enqueue: the event has no id or no body: pass an event from webhook.Handler, payments.ParseEvent or ListEvents")
	}
	// The deadline covers the wait for a connection and every statement:
	// past it pgx closes the connection, which ends the statement.
	ctx, cancel := context.WithTimeout(ctx, q.w.cfg.Timeout)
	defer cancel()
	inserted, err := q.insert(ctx, storedID(ev.ID), ev.RawJSON())
	if err != nil {
		return false, fmt.Errorf("%w: pgstore: enqueue event %s: %w (answered 503: the service delivers it again, and reconcile lists it; "+
			"check that the database is reachable and that the pool has a connection free beyond the workers')",
			webhook.ErrUnavailable, shownID(ev.ID), err)
	}
	return inserted, nil
}

func (q *Queue) insert(ctx context.Context, id string, body []byte) (bool, error) {
	tx, err := q.w.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(ctx) }() // a no-op after the commit
	var fresh bool
	if err := tx.QueryRow(ctx, q.w.q.enqueue, id, body).Scan(&fresh); errors.Is(err, pgx.ErrNoRows) {
		return false, nil // a duplicate: the transaction wrote nothing
	} else if err != nil {
		return false, err
	}
	res, err := q.client.InsertTx(ctx, tx, EventArgs{ID: id}, q.w.insertOpts())
	if err != nil {
		return false, fmt.Errorf("insert its River job: %w", err)
	}
	if _, err := tx.Exec(ctx, q.w.q.setJob, id, res.Job.ID); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// Reconcile enqueues the listed events as deliveries do, so that River's
// workers process those no delivery brought:
//
//	res, err := q.Reconcile(ctx, client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: checkpoint}))
//
// Processed counts the events it enqueued, AlreadyDone those enqueued
// before; the checkpoint is the last event listed before the first
// failure. It stops at the first error and returns it with what it did.
func (q *Queue) Reconcile(ctx context.Context, events iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error) {
	var res webhook.ReconcileResult
	for ev, err := range events {
		if err != nil {
			return res, fmt.Errorf("pgstore: reconcile: listing events: %w", err)
		}
		inserted, err := q.enqueue(ctx, ev)
		if err != nil {
			res.Failed++
			res.FailedIDs = append(res.FailedIDs, ev.ID)
			return res, err
		}
		if inserted {
			res.Processed++
		} else {
			res.AlreadyDone++
		}
		res.Checkpoint = webhook.Checkpoint{ID: ev.ID, CreatedAt: ev.CreatedAt}
	}
	return res, nil
}

// Tracker returns an outcome tracker on the Queue's outcome table: the
// workers record each event in it inside the job's transaction and notify
// waiters after the commit, so Await in any process returns as soon as
// the deciding event's function committed, never before. Events Await
// lists (outcome.WithEventList) are enqueued like deliveries.
func (q *Queue) Tracker(opts ...outcome.Option) *outcome.Tracker {
	return outcome.NewTracker(q.w.outcomes, append(slices.Clip(opts), outcome.WithReconcile(q.Reconcile))...)
}

// Start starts the River client's workers (NewQueue's, or yours): they run
// until Stop or until ctx ends. A process that only receives need not
// start.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("pgstore: start the queue's workers: %w (was Migrate run?)", err)
	}
	return nil
}

// Stop stops taking jobs and waits for the running ones to finish, until
// ctx ends; their functions' contexts are then cancelled, and what did not
// commit runs again in another worker.
func (q *Queue) Stop(ctx context.Context) error { return q.client.Stop(ctx) }
