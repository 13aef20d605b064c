package pgstore

import (
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// NoNotify is a hook of the package's benchmarks: an OutcomeStore whose
// writes do not NOTIFY, to measure what the notification costs
// (BenchmarkOutcomeApply, BenchmarkOutcomeHandler).
func NoNotify() Option { return func(o *options) { o.noNotify = true } }

// Client is the Queue's River client, for the tests that read its jobs
// through River's API (JobList, JobGet, JobRetry).
func (q *Queue) Client() *river.Client[pgx.Tx] { return q.client }

// SendNotify is what a Queue's Worker calls after a commit that decided a
// final outcome.
func (s *OutcomeStore) SendNotify() { s.sendNotify() }
