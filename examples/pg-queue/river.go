package main

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// newQueueOnYourRiver is the same queue on a River client of the
// merchant's own (pg-queue -own-river), for a merchant who already runs
// River for other jobs: the events' worker joins the client's workers,
// and the client works the events' queue beside the merchant's. Start and
// Stop are the client's.
func newQueueOnYourRiver(pool *pgxpool.Pool, book pgstore.TxEventFunc, logger *slog.Logger) (*pgstore.Queue, error) {
	// region own-river
	w, err := pgstore.NewWorker(pool, book, nil)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w) // beside your own workers
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: 10}, // your own jobs'
			pgstore.QueueName:  {MaxWorkers: pgstore.DefaultWorkers},
		},
		Workers: workers,
		// A dead worker's jobs run again within minutes (River's own
		// default is an hour); the job's fence keeps a late attempt from
		// committing.
		RescueStuckJobsAfter: pgstore.DefaultRescueAfter,
		Logger:               logger,
	})
	if err != nil {
		return nil, err
	}
	return w.Queue(client)
	// endregion
}
