package pgstore

import (
	"context"
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

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// DefaultQueueTable is the table in which a Queue remembers the event ids it
// enqueued, and keeps each event's body until it is moved into River,
// unless QueueConfig.Table says otherwise.
const DefaultQueueTable = "payments_webhook_queue"

// QueueName is the River queue a Queue's jobs go to and its workers take
// them from. Other River clients of yours leave it alone unless they list it
// in their Queues.
const QueueName = "payments_webhooks"

// DefaultWorkers is how many jobs a started Queue runs at once in one
// process unless QueueConfig.Workers says otherwise.
const DefaultWorkers = 10

// ErrJobRescued is returned by a job whose attempt was given up while your
// function ran (River's rescuer took it back after QueueConfig.RescueAfter,
// or it was cancelled): nothing of this attempt commits, and River runs the
// event again. Keep your function well under QueueConfig.JobTimeout, which
// itself stays under RescueAfter.
var ErrJobRescued = errors.New("pgstore: the job's attempt was rescued or cancelled while the function ran; nothing of it was committed and River runs the event again")

// QueueConfig configures a Queue. The zero value is the recommended set-up.
type QueueConfig struct {
	// Workers is how many events one started process processes at once
	// (default DefaultWorkers). Each holds a pool connection while your
	// function runs: keep the pool larger than Workers plus the deliveries
	// you expect at once.
	Workers int
	// JobTimeout bounds one run of your function: its context is
	// cancelled after it, the run fails and River retries it with back-off
	// (default River's, 1 minute). It must stay under RescueAfter.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River's rescuer
	// takes it back from a worker that died (default 1 hour). A function
	// that returns after its job was rescued commits nothing (ErrJobRescued).
	RescueAfter time.Duration
	// MaxAttempts is how many times River runs a failing event before it
	// discards the job (default River's, 25, over about three weeks of
	// growing back-off). A discarded job stays in River's table, where River
	// UI or the river CLI can retry it.
	MaxAttempts int
	// Retention is how long an enqueued event id is remembered: a delivery,
	// listing or redelivery of the event within it enqueues nothing (default
	// DefaultRetention, at least MinRetention: twice the signature
	// tolerance, past which the service's deliveries no longer verify).
	Retention time.Duration
	// Timeout bounds each call of Enqueue, from the wait for a pool
	// connection to the commit (default DefaultTimeout): a database that
	// hangs, or a pool whose connections it holds, costs the delivery a
	// 503 within it (TestQueueFrozenDatabase).
	Timeout time.Duration
	// Table is the table of enqueued event ids and of the events waiting
	// to be moved into River (default DefaultQueueTable);
	// OutcomeTable the outcome tracker's (default DefaultOutcomeTable).
	// Lower-case letters, digits and underscores, optionally qualified by
	// a schema.
	Table, OutcomeTable string
	// Schema is the schema of River's tables (default: the connection's
	// search_path).
	Schema string
	// Logger receives River's log lines and the Queue's (default: none).
	Logger *slog.Logger
}

// TxEventFunc processes one event inside a database transaction that also
// completes the event's River job: its writes and the completion commit
// together, or not at all. Return nil once the event is handled; an error
// makes River run it again later with back-off (the transaction rolls
// back). tx is a real pgx.Tx: a savepoint inside the job's transaction, so
// tx.Commit only releases the savepoint and tx.Rollback undoes your writes
// alone; every use of tx after your function returned fails with
// pgx.ErrTxClosed. ctx is cancelled after QueueConfig.JobTimeout and when
// the process stops its Queue.
type TxEventFunc func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error

// Queue is the recommended way to receive webhooks on PostgreSQL: the
// receiver verifies a delivery, records the event once (Enqueue: one
// INSERT of its id and body) and answers 200 at once, whatever your
// function costs; a started Queue moves the event into River as its
// workers have room, and River workers, in any number of processes, run
// your function in a
// transaction that also completes the job and records the event's outcome
// (outcome.Tracker), so that its effects happen exactly once.
//
//	q, err := pgstore.NewQueue(pool, bookOrder, nil)
//	err = q.Migrate(ctx)                               // River's tables and the Queue's
//	h := webhook.NewHandler(verifier, q.Enqueue)       // in the receiver
//	err = q.Start(ctx); defer q.Stop(context.Background()) // in each worker process
//
// Every path into the queue is the same unique insert: a delivery, its
// retries, Reconcile (Queue.Reconcile, or a handler's over q.Enqueue), the
// event-list fallback of the Tracker's Await, and payments listen, which
// forwards to the handler. So an event that reaches the tracker always
// reaches your function too.
type Queue struct {
	pool     *pgxpool.Pool
	fn       TxEventFunc
	cfg      QueueConfig
	client   *river.Client[pgx.Tx]
	outcomes *OutcomeStore
	q        queueQueries
	move     mover
	gather   gatherer
}

// NewQueue returns a Queue that runs fn for each event on pool; cfg may be
// nil. It does not touch the database: create the tables with Migrate. Its
// errors for a bad configuration match ErrInvalidOption.
func NewQueue(pool *pgxpool.Pool, fn TxEventFunc, cfg *QueueConfig) (*Queue, error) {
	if pool == nil {
		return nil, invalid("NewQueue needs a pool")
	}
	if fn == nil {
		return nil, invalid("NewQueue needs a function to run for each event")
	}
	c := QueueConfig{}
	if cfg != nil {
		c = *cfg
	}
	c.Workers = defaulted(c.Workers, DefaultWorkers)
	c.Retention = defaulted(c.Retention, DefaultRetention)
	c.Timeout = defaulted(c.Timeout, DefaultTimeout)
	c.Table = defaulted(c.Table, DefaultQueueTable)
	c.OutcomeTable = defaulted(c.OutcomeTable, DefaultOutcomeTable)
	if err := c.check(); err != nil {
		return nil, err
	}
	outcomes, err := NewOutcomeStore(pool, WithTable(c.OutcomeTable), WithTimeout(c.Timeout), notifyAfterCommit(), WithLogger(c.Logger))
	if err != nil {
		return nil, err
	}
	q := &Queue{pool: pool, fn: fn, cfg: c, outcomes: outcomes, q: buildQueueQueries(c.Table, c.Schema, c.Retention),
		move: newMover()}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &eventWorker{q: q}); err != nil {
		return nil, invalid("%v", err)
	}
	logger := q.riverLogger()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{QueueName: {MaxWorkers: c.Workers}},
		Workers:              workers,
		JobTimeout:           c.JobTimeout,
		RescueStuckJobsAfter: c.RescueAfter,
		MaxAttempts:          c.MaxAttempts,
		Schema:               c.Schema,
		Logger:               logger,
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, &river.InsertOpts{Queue: QueueName} },
			&river.PeriodicJobOpts{RunOnStart: true})},
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	if err := river.AddWorkerSafely(workers, &purgeWorker{q: q}); err != nil {
		return nil, invalid("%v", err)
	}
	q.client = client
	return q, nil
}

func defaulted[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (c QueueConfig) check() error {
	switch {
	case c.Workers < 0:
		return invalid("QueueConfig.Workers %d: must not be negative", c.Workers)
	case c.JobTimeout < 0, c.RescueAfter < 0, c.MaxAttempts < 0:
		return invalid("QueueConfig: JobTimeout, RescueAfter and MaxAttempts must not be negative")
	case c.RescueAfter > 0 && c.JobTimeout >= c.RescueAfter,
		c.RescueAfter > 0 && c.JobTimeout == 0 && c.RescueAfter <= time.Minute:
		return invalid("QueueConfig.RescueAfter %v must be longer than JobTimeout (River's default: 1 minute): "+
			"a job is rescued only once its run has surely ended", c.RescueAfter)
	case c.Retention < MinRetention:
		return invalid("QueueConfig.Retention %v: at least %v (twice the signature tolerance)", c.Retention, MinRetention)
	case c.Timeout < 0:
		return invalid("QueueConfig.Timeout %v: must be positive", c.Timeout)
	}
	if err := checkTable(c.Table); err != nil {
		return err
	}
	if c.Schema != "" && !outcomeTableRE.MatchString(c.Schema) || strings.Contains(c.Schema, ".") {
		return invalid("QueueConfig.Schema %q: lower-case letters, digits and underscores", c.Schema)
	}
	return nil
}

// Enqueue records ev in the Queue's outbox unless its id was enqueued
// within the retention, and returns once that is committed: it is the
// function to give webhook.NewHandler. A started Queue then moves the event
// into River as soon as its workers have room: at once when it is this
// Queue; when it runs in another process, at its next look (an idle mover
// looks once a second) once the Queue's table has received nothing for
// 50 ms, at the latest 500 ms after the oldest waiting event arrived. A
// duplicate (concurrent or late) inserts nothing and writes nothing
// durable. Deliveries that arrive while two of the Queue's inserts are on
// their way are gathered into one INSERT and one commit once one ends;
// a quiet Queue sends each at once. Its errors wrap webhook.ErrUnavailable,
// so the handler answers 503 and the service delivers the event again.
func (q *Queue) Enqueue(ctx context.Context, ev *payments.Event) error {
	_, err := q.enqueue(ctx, ev)
	return err
}

// enqueue reports whether it inserted a job.
func (q *Queue) enqueue(ctx context.Context, ev *payments.Event) (bool, error) {
	if ev == nil || ev.ID == "" || len(ev.RawJSON()) == 0 {
		return false, fmt.Errorf("pgstore: enqueue: the event has no id or no body: pass an event from webhook.Handler, payments.ParseEvent or ListEvents")
	}
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	inserted, err := q.insert(ctx, ev)
	if err != nil {
		return false, fmt.Errorf("%w: pgstore: enqueue event %s: %w (answered 503: the service delivers it again, and reconcile lists it; "+
			"check that the database is reachable and that the pool has a connection free beyond QueueConfig.Workers)",
			webhook.ErrUnavailable, shownID(ev.ID), err)
	}
	return inserted, nil
}

func (q *Queue) insert(ctx context.Context, ev *payments.Event) (bool, error) {
	// One row with the id and the body, or for a duplicate nothing at all
	// (TestWALPerDelivery), committed on its own or with the deliveries
	// gathered beside it (queue_gather.go). Past the deadline pgx closes
	// the connection, which ends the statement, so that a database that
	// froze cannot hold the answer past QueueConfig.Timeout
	// (TestQueueFrozenDatabase).
	inserted, err := q.insertGathered(ctx, storedID(ev.ID), ev.RawJSON())
	if err != nil || !inserted {
		return false, err
	}
	poke(q.move.received)
	return true, nil
}

// Reconcile enqueues the listed events through the same unique insert as a
// delivery, so that River's workers process those no delivery brought:
//
//	res, err := q.Reconcile(ctx, client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: checkpoint}))
//
// Processed counts the events it enqueued, AlreadyDone those enqueued before
// (by a delivery, another replica or an earlier run); the checkpoint is the
// last event listed before the first failure. It stops at the first error of
// the listing or the database, and returns it with what it did.
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
// workers record each event in it inside the job's transaction, and it
// notifies waiters right after the commit, so Await in any process returns
// as soon as the function of the deciding event committed, and never
// before. Events
// that Await lists (outcome.WithEventList) are enqueued like deliveries, so
// they reach your function too.
func (q *Queue) Tracker(opts ...outcome.Option) *outcome.Tracker {
	return outcome.NewTracker(q.outcomes, append(slices.Clip(opts), outcome.WithReconcile(q.Reconcile))...)
}

// Migrate creates or upgrades River's tables (rivermigrate), the Queue's
// table and the outcome table. It is idempotent and safe to run from
// every process at once; bounded by ctx alone. A DBA who migrates by hand
// runs River's migrations (the river CLI: river migrate-up) and
// MigrationSQL's statements.
func (q *Queue) Migrate(ctx context.Context) error {
	return q.migrate(ctx)
}

// MigrationSQL returns the statements that create the Queue's own tables
// (not River's), for a DBA to apply by hand.
func (q *Queue) MigrationSQL() string { return q.q.create + ";\n" + q.outcomes.MigrationSQL() }

// riverLogger is the Logger, or one that drops everything: River's own
// default writes to stdout.
func (q *Queue) riverLogger() *slog.Logger {
	if q.cfg.Logger != nil {
		return q.cfg.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Start starts this process's workers, up to QueueConfig.Workers events at
// once, and its mover, which moves received events from the outbox into
// River as the workers have room; both run until Stop or until ctx ends.
// A process that only receives (Enqueue) need not start.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("pgstore: start the queue's workers: %w (was Migrate run?)", err)
	}
	q.startMover(ctx)
	return nil
}

// Stop stops taking jobs and waits for the running ones to finish, until
// ctx ends; their functions' contexts are then cancelled, and what did not
// commit runs again in another worker.
func (q *Queue) Stop(ctx context.Context) error {
	moverErr := q.stopMover(ctx)
	if err := q.client.Stop(ctx); err != nil {
		return err
	}
	return moverErr
}
