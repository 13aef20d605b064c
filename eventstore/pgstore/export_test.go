package pgstore

import "context"

// NoNotify is a hook of the package's benchmarks: an OutcomeStore whose
// writes do not NOTIFY, to measure what the notification costs
// (BenchmarkOutcomeApply, BenchmarkOutcomeHandler).
func NoNotify() Option { return func(o *options) { o.noNotify = true } }

// MoveOnce is one move of the Queue's mover, for the tests that race
// movers against each other and against a failing insert.
func (q *Queue) MoveOnce(ctx context.Context) (int, error) { return q.moveOnce(ctx) }

// Gathering is how many of the Queue's inserts are in flight and how many
// Enqueues wait for one to end (queue_gather.go).
func (q *Queue) Gathering() (inFlight, waiting int) {
	q.gather.mu.Lock()
	defer q.gather.mu.Unlock()
	return q.gather.inFlight, len(q.gather.waiting)
}

// GatherInFlight is how many inserts a Queue keeps in flight at once.
const GatherInFlight = gatherInFlight
