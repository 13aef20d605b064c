package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// listArgs is the periodic job that lists the service's payment events and
// records them in the outcome tracker, for every payout's job to read: one
// listing for the whole cluster (River runs periodic jobs on its leader
// only, and the job is unique while it is queued or running), however many
// payouts wait. A merchant who also receives webhooks on the same outcome
// table (pgstore.Queue) gets the outcomes sooner; the listing then only
// finds them recorded.
type listArgs struct{}

// Kind is the job's kind in River's tables.
func (listArgs) Kind() string { return "payouts_list_events" }

// InsertOpts keeps one listing queued or running at a time.
func (listArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// listWindow is how far back the first listing goes.
const listWindow = 24 * time.Hour

// cursorName names the listing's row in payouts_event_cursor.
const cursorName = "payments"

type listWorker struct {
	river.WorkerDefaults[listArgs]
	pool    *pgxpool.Pool
	client  *payments.Client
	tracker *outcome.Tracker
}

// Work lists the events after the last one recorded (the first time, those
// of the last listWindow) and records each, then where it got to, page by
// page: a listing cut short starts again from its last page.
func (w *listWorker) Work(ctx context.Context, _ *river.Job[listArgs]) error {
	var after string
	err := w.pool.QueryRow(ctx, `SELECT after FROM payouts_event_cursor WHERE name = $1`, cursorName).Scan(&after)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("list events: read the cursor: %w", err)
	}
	params := &payments.EventListParams{Types: outcome.TrackedTypes(), After: after, Limit: payments.EventListMaxLimit}
	if after == "" {
		params.Since = time.Now().Add(-listWindow)
	}
	for {
		page, err := w.client.Webhooks.ListEventsPage(ctx, params)
		var apiErr *payments.APIError
		if errors.As(err, &apiErr) && apiErr.Code == payments.CodeUnknownEventCursor {
			// The service forgot the cursor: list the window again (each
			// event counts once in the tracker).
			_, err = w.pool.Exec(ctx, `DELETE FROM payouts_event_cursor WHERE name = $1`, cursorName)
			return err
		}
		if err != nil {
			return fmt.Errorf("list events: %w", err)
		}
		for _, ev := range page.Events {
			// An event the tracker cannot record is logged by it and
			// skipped (outcome.EffectUntrackable): the error is its store's.
			if _, _, err := w.tracker.Apply(ctx, ev); err != nil {
				return fmt.Errorf("list events: record event %s: %w", ev.ID, err)
			}
		}
		if n := len(page.Events); n > 0 {
			last := page.Events[n-1].ID
			if _, err := w.pool.Exec(ctx, `INSERT INTO payouts_event_cursor (name, after) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET after = excluded.after`, cursorName, last); err != nil {
				return fmt.Errorf("list events: save the cursor: %w", err)
			}
		}
		if !page.HasMore || len(page.Events) == 0 {
			return nil
		}
		params = page.NextParams()
	}
}
