package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
)

// reconcileWindow is how far back a run lists events when there is no
// checkpoint yet (or the service forgot it): well inside the queue's
// retention of 7 days, so an event enqueued before is never enqueued twice.
const reconcileWindow = 24 * time.Hour

// reconcileEvery runs reconcileOnce at once and then every interval until
// ctx ends. An event no delivery brought (the receiver was down past the
// service's retries) so reaches book within one interval.
func (a *app) reconcileEvery(ctx context.Context, client *payments.Client, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if err := a.reconcileOnce(ctx, client); err != nil && ctx.Err() == nil {
			a.logger.Warn("reconcile failed; the next run tries again", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// reconcileOnce lists the service's events after the stored checkpoint (or
// from the last 24 h) and enqueues them through the queue's unique insert:
// one a delivery already enqueued costs a read and writes nothing, so
// listing an event twice is harmless. The checkpoint moves only past events
// that were enqueued.
func (a *app) reconcileOnce(ctx context.Context, client *payments.Client) error {
	// region reconcile
	var after string
	err := a.pool.QueryRow(ctx, `SELECT event_id FROM reconcile_checkpoint WHERE name = 'events'`).Scan(&after)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read the checkpoint: %w", err)
	}
	params := &payments.EventListParams{After: after}
	if after == "" {
		params.Since = time.Now().Add(-reconcileWindow)
	}
	res, err := a.queue.Reconcile(ctx, client.Webhooks.ListEvents(ctx, params))
	if !res.Checkpoint.IsZero() {
		if _, serr := a.pool.Exec(ctx, `INSERT INTO reconcile_checkpoint (name, event_id, created_at) VALUES ('events', $1, $2)
ON CONFLICT (name) DO UPDATE SET event_id = EXCLUDED.event_id, created_at = EXCLUDED.created_at`,
			res.Checkpoint.ID, res.Checkpoint.CreatedAt); serr != nil {
			return fmt.Errorf("store the checkpoint: %w (the next run lists these events again, which costs nothing)", serr)
		}
	}
	if res.Enqueued > 0 {
		a.logger.Info("reconcile enqueued events no delivery brought", slog.Int("events", res.Enqueued))
	}
	if errors.Is(err, payments.CodeUnknownEventCursor) {
		// The service forgot the checkpoint: list the window next time.
		_, err = a.pool.Exec(ctx, `DELETE FROM reconcile_checkpoint WHERE name = 'events'`)
	}
	// endregion
	return err
}
