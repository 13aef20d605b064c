package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// region tracker
// newTracker returns the tracker that learns the payments' outcomes. This
// program has no webhook receiver, so the tracker asks the service's event
// list (WithEventList) as soon as an Await finds no outcome in its store,
// then again less and less often; the listed events are recorded once each,
// however many Awaits wait. A program with a receiver would feed the same
// tracker from its handler (Tracker.Wrap) and share a PostgreSQL or Redis
// store instead.
func newTracker(client *payments.Client) *outcome.Tracker {
	return outcome.NewTracker(nil, outcome.WithEventList(client, time.Millisecond))
}

// endregion

// awaiters is how many Awaits run at once: they share one tracker, whose
// listing serves them all.
const awaiters = 64

// awaitOutcomes waits, for at most wait, for the final outcome of every row
// the journal holds confirmed (done) but not decided, with a progress line,
// and journals each outcome (eventOutcome, the confirm's record with the
// final state and the deciding event's id) before relying on it: a run
// started again awaits only the rows still open. It returns the last record
// of each row, updated. A row still pending when wait ends stays done, for
// the next run. The error is the journal's, or ctx's when it ended first.
func awaitOutcomes(ctx context.Context, tr *outcome.Tracker, j *journal, rows []row, state map[string]record, wait time.Duration, out io.Writer) (map[string]record, error) {
	var open []record
	for _, r := range rows {
		if rec := state[r.PayoutID]; rec.Event == eventDone {
			open = append(open, rec)
		}
	}
	next := make(map[string]record, len(state))
	for id, rec := range state {
		next[id] = rec
	}
	if len(open) == 0 {
		return next, nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var (
		mu      sync.Mutex
		errs    []error
		decided atomic.Int64
		counts  sync.Map // state -> *atomic.Int64
		wg      sync.WaitGroup
		sem     = make(chan struct{}, awaiters)
	)
	countOf := func(s string) int64 {
		if v, ok := counts.Load(s); ok {
			return v.(*atomic.Int64).Load()
		}
		return 0
	}
	tick := startTicker(out, func() string {
		return fmt.Sprintf("outcomes: %d of %d confirmed payments decided: %d completed, %d failed, %d rejected",
			decided.Load(), len(open), countOf("completed"), countOf("failed"), countOf("rejected"))
	})
	for _, rec := range open {
		select {
		case sem <- struct{}{}:
		case <-waitCtx.Done():
		}
		if waitCtx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := tr.Await(waitCtx, rec.PaymentID)
			var conflict *outcome.ConflictError
			switch {
			case errors.As(err, &conflict):
				// The first final state stands; say that another came.
				rec.Reason = conflict.Error()
			case err != nil:
				return // still pending: the next run awaits it again
			}
			rec.Event, rec.State, rec.EventID = eventOutcome, string(res.State), res.EventID
			if err := j.append(rec); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("payout %s: %w: %w", rec.PayoutID, errJournal, err))
				mu.Unlock()
				cancel()
				return
			}
			v, _ := counts.LoadOrStore(rec.State, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
			decided.Add(1)
			mu.Lock()
			next[rec.PayoutID] = rec
			mu.Unlock()
		}()
	}
	wg.Wait()
	tick.end()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stopped while awaiting outcomes: %w; run again to learn the rest", err)
	}
	return next, nil
}
