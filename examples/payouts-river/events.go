package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// listArgs is the periodic job that lists the service's payment events and
// records them in the outcome tracker, for every payout's job to read: one
// listing a period for the whole cluster (River runs periodic jobs on its
// leader only, and the job is unique by period), however many payouts wait.
// It runs in a queue of its own (OutcomesQueue, one worker a process), so
// it never waits behind the payouts' backlog, and a listing stranded by a
// killed worker holds up only its own period. A merchant who also receives
// webhooks on the same outcome table (pgstore.Queue) gets the outcomes
// sooner; the listing then only finds them recorded.
type listArgs struct{}

// Kind is the job's kind in River's tables.
func (listArgs) Kind() string { return "payouts_list_events" }

// OutcomesQueue is the River queue of the event listing.
const OutcomesQueue = "payouts_outcomes"

// listOpts are the listing's insert options: its queue, one job a period.
func listOpts(every time.Duration) *river.InsertOpts {
	return &river.InsertOpts{Queue: OutcomesQueue, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
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
		// Each event is recorded on its own: one the store fails to record
		// (a database timeout) does not throw the page away. The cursor
		// stops before the first that failed, so the next listing (River
		// retries this one soon) records it again; those after it count
		// once anyway. An event the tracker cannot track is logged by it
		// and skipped (outcome.EffectUntrackable): the error is its store's.
		saved, failed := len(page.Events), error(nil)
		for i, ev := range page.Events {
			if _, _, err := w.tracker.Apply(ctx, ev); err != nil {
				if failed == nil {
					saved, failed = i, fmt.Errorf("list events: record event %s: %w", ev.ID, err)
				}
			}
		}
		if saved > 0 {
			last := page.Events[saved-1].ID
			if _, err := w.pool.Exec(ctx, `INSERT INTO payouts_event_cursor (name, after) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET after = excluded.after`, cursorName, last); err != nil {
				return errors.Join(failed, fmt.Errorf("list events: save the cursor: %w", err))
			}
		}
		if failed != nil {
			return failed
		}
		if !page.HasMore || len(page.Events) == 0 {
			return nil
		}
		params = page.NextParams()
	}
}
