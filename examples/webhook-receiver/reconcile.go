package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// defaultReconcileWindow is how far back reconcile lists events unless
// PAYMENTS_RECONCILE_WINDOW says otherwise: the program keeps no state, so
// at start-up it cannot know when it last ran.
const defaultReconcileWindow = 24 * time.Hour

// maxReconcileWindow is the retention of processed ids in the PostgreSQL
// and Redis stores (7 days; the same in both): an event listed after its
// id was forgotten would be processed again.
const maxReconcileWindow = pgstore.DefaultRetention

// reconcileConfig says when and how far back to reconcile.
type reconcileConfig struct {
	every  time.Duration    // 0: reconcile is off
	window time.Duration    // how far back the listing goes
	client *payments.Client // lists the service's events; nil when off
}

// parseReconcile reads PAYMENTS_RECONCILE_EVERY and PAYMENTS_RECONCILE_WINDOW.
// When reconcile is on it makes the client that lists the service's events
// from PAYMENTS_API_KEY and PAYMENTS_BASE_URL (payments.NewClientFromEnv),
// and refuses the in-memory store (storeKind "memory"), which forgets on
// every restart the events it processed: reconcile at start-up would
// process them again.
func parseReconcile(every, window, storeKind string) (reconcileConfig, error) {
	rc := reconcileConfig{window: defaultReconcileWindow}
	var problems []error
	if s := strings.TrimSpace(every); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			problems = append(problems, fmt.Errorf("%s=%q: give a duration such as 10m, or 0 (or nothing) to turn reconcile off", envReconcileEvery, s))
		}
		rc.every = max(d, 0)
	}
	if s := strings.TrimSpace(window); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > maxReconcileWindow {
			problems = append(problems, fmt.Errorf("%s=%q: give a duration from 1s to %s (how long the stores remember processed events), such as 24h",
				envReconcileWindow, s, maxReconcileWindow))
		}
		rc.window = d
	}
	if rc.every == 0 {
		return reconcileConfig{}, errors.Join(problems...)
	}
	if storeKind == "memory" {
		problems = append(problems, fmt.Errorf("%s needs %s: the in-memory store forgets processed events when the program stops, "+
			"and reconcile at start-up would process again every event of the last %s", envReconcileEvery, envStore, rc.window))
	}
	client, err := payments.NewClientFromEnv()
	if err != nil {
		problems = append(problems, fmt.Errorf("%s is set: reconcile lists the service's events with PAYMENTS_API_KEY and PAYMENTS_BASE_URL: %w",
			envReconcileEvery, err))
	}
	rc.client = client
	return rc, errors.Join(problems...)
}

// startReconcile runs reconcile in the background: at once, then every
// rc.every, until ctx ends. It returns the function that stops it and
// waits for the run in progress to end (its function is cancelled, its
// event released for the next delivery or run).
func startReconcile(ctx context.Context, hooks *webhook.Handler, rc reconcileConfig, logger *slog.Logger) (stop func(wait context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	r := &reconciler{hooks: hooks, rc: rc, logger: logger}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.loop(ctx)
	}()
	logger.Info("reconcile on", slog.String("every", rc.every.String()), slog.String("window", rc.window.String()))
	return func(wait context.Context) {
		cancel()
		select {
		case <-done:
		case <-wait.Done(): // a function that ignores its cancelled context: Shutdown still runs
			logger.Warn("reconcile still running at shutdown: its event is left to the next delivery or run")
		}
	}
}

// reconciler runs the events the service lists through the webhook
// handler: its function and its store, so that an event that a delivery
// processed is skipped, and one whose deliveries all failed (the receiver
// was down longer than the service retries) is processed once. Every
// replica may run it; the store makes sure one of them processes each
// event.
type reconciler struct {
	hooks  *webhook.Handler
	rc     reconcileConfig
	logger *slog.Logger
	// checkpoint is where the last run got to: the next run lists from
	// there while it is inside the window. Kept in memory only.
	checkpoint webhook.Checkpoint
}

// loop reconciles at once, then every rc.every, until ctx ends or the
// service turns out to have no list of events.
func (r *reconciler) loop(ctx context.Context) {
	t := time.NewTicker(r.rc.every)
	defer t.Stop()
	for r.once(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// once runs one reconcile over the window, or from the last checkpoint
// when that is more recent, and says whether to go on. The handler logs
// each event recovered and a summary (recovered, already_done, failed).
func (r *reconciler) once(ctx context.Context) bool {
	since := time.Now().Add(-r.rc.window)
	params := &payments.EventListParams{Since: since}
	if !r.checkpoint.IsZero() && r.checkpoint.CreatedAt.After(since) {
		params = &payments.EventListParams{After: r.checkpoint.ID}
	}
	res, err := r.hooks.Reconcile(ctx, r.rc.client.Webhooks.ListEvents(ctx, params))
	if !res.Checkpoint.IsZero() {
		r.checkpoint = res.Checkpoint
	}
	switch {
	case errors.Is(err, payments.ErrListEventsUnavailable):
		r.logger.Warn("reconcile turned off: the service has no list of events at GET /webhooks/events, the path this SDK assumes",
			slog.String("error", err.Error()))
		return false
	case errors.Is(err, payments.CodeUnknownEventCursor):
		r.checkpoint = webhook.Checkpoint{} // forgotten by the service: the next run lists the window
	case errors.Is(err, webhook.ErrShutdown), ctx.Err() != nil:
		return false
	}
	return true
}
