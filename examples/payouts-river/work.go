package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/outcome"
)

// app is what every command shares: the pool, the outcome tracker on its
// PostgreSQL table, and the River client (which only work starts).
type app struct {
	pool    *pgxpool.Pool
	tracker *outcome.Tracker
	river   *river.Client[pgx.Tx]
	logger  *slog.Logger
}

// riverConfig is how the workers of a process run.
type riverConfig struct {
	// workers is how many payouts one process pays at once; the rate
	// limit, not this, bounds what the service sees.
	workers int
	// jobTimeout bounds one attempt of a job; rescueAfter is how long a
	// job may run before River's rescuer gives it to another worker (the
	// worker seems dead): it must exceed jobTimeout.
	jobTimeout, rescueAfter time.Duration
	// retryMin and retryMax bound River's wait before it tries again a
	// job whose outcome was unknown: retryMin doubling with each error.
	retryMin, retryMax time.Duration
	// listEvery is how often the service's events are listed.
	listEvery time.Duration
	work      workConfig
}

// retryPolicy is River's back-off for a failed attempt (an unknown outcome,
// a database that failed, a worker that died): retryMin, doubling with each
// error, up to retryMax. River's default (attempt⁴ seconds) waits minutes
// after a few kills; a payout whose outcome is unknown is safe to try again
// soon, with the same keys.
type retryPolicy struct{ min, max time.Duration }

// NextRetry is when River runs the job again.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := p.min
	for i := 1; i < len(job.Errors) && d < p.max; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, p.max))
}

// maxAttempts is how many failed attempts a payout's job may make before
// River discards it (status names it): with retryMax of 5 minutes, hours
// of an unreachable service.
const maxAttempts = 100

// newApp makes the tracker and the River client on pool and runs the
// migrations. client (nil for load and status) is the service's; with it
// the River client has the workers and the periodic event listing.
func newApp(ctx context.Context, pool *pgxpool.Pool, client *payments.Client, cfg riverConfig, logger *slog.Logger) (*app, error) {
	outcomes, err := pgstore.NewOutcomeStore(pool, pgstore.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool, outcomes); err != nil {
		return nil, err
	}
	a := &app{pool: pool, tracker: outcome.NewTracker(outcomes, outcome.WithLogger(logger)), logger: logger}
	workers := river.NewWorkers()
	wcfg := cfg.work
	wcfg.listEvery = cfg.listEvery
	river.AddWorker(workers, &payoutWorker{pool: pool, client: client, tracker: a.tracker, cfg: wcfg, logger: logger})
	river.AddWorker(workers, &listWorker{pool: pool, client: client, tracker: a.tracker})
	rc := &river.Config{
		Workers:              workers,
		JobTimeout:           cfg.jobTimeout,
		RescueStuckJobsAfter: cfg.rescueAfter,
		MaxAttempts:          maxAttempts,
		RetryPolicy:          retryPolicy{min: cfg.retryMin, max: cfg.retryMax},
		Logger:               logger,
	}
	if client != nil {
		// The listing has a queue of its own: it never waits behind the
		// payouts.
		rc.Queues = map[string]river.QueueConfig{QueueName: {MaxWorkers: cfg.workers}, OutcomesQueue: {MaxWorkers: 1}}
		rc.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cfg.listEvery),
			func() (river.JobArgs, *river.InsertOpts) { return listArgs{}, listOpts(cfg.listEvery) }, &river.PeriodicJobOpts{RunOnStart: true})}
	}
	if a.river, err = river.NewClient(riverpgxv5.New(pool), rc); err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return a, nil
}

// work runs this process's workers until ctx ends, then lets the running
// jobs finish (up to stopWait): what does not finish is taken up again by
// another worker, with the same keys.
func (a *app) work(ctx context.Context, stopWait time.Duration) error {
	if err := a.river.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start the workers: %w", err)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWait)
	defer cancel()
	if err := a.river.Stop(sctx); err != nil {
		return fmt.Errorf("stop the workers: %w (their jobs are rescued and paid by another worker, with the same keys)", err)
	}
	return nil
}
