package pgstore

import "context"

// NoNotify is a hook of the package's benchmarks: an OutcomeStore whose
// writes do not NOTIFY, to measure what the notification costs
// (BenchmarkOutcomeApply, BenchmarkOutcomeHandler).
func NoNotify() Option { return func(o *options) { o.noNotify = true } }

// MoveOnce is one move of the Queue's mover, for the tests that race
// movers against each other and against a failing insert.
func (q *Queue) MoveOnce(ctx context.Context) (int, error) { return q.moveOnce(ctx) }
