package pgstore

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// notifyGap is the least time between the starts of two notifications of
// one OutcomeStore's afterCommitNotifier: the commits within it share one,
// so that a busy Queue sends tens of notifications a second, not one per
// event, and a waiter learns of a commit at most this much and a round
// trip after it (BenchmarkQueueAwait measures it). The gap counts from the
// start of the previous notification, not its end, so that a slow round
// trip (a loaded server) does not add to it
// (TestNotifyGapCountsFromTheSendsStart).
const notifyGap = 50 * time.Millisecond

// afterCommitNotifier sends an OutcomeStore's NOTIFY after the commits of
// a Queue's jobs, instead of inside their transactions: PostgreSQL holds a
// lock of the whole database from a notifying transaction's pre-commit to
// the end of its commit, so that notifying commits are flushed one after
// the other, never together, which held a Queue to 0.77x the events per
// second of a hand-written River receiver (BenchmarkQueue; BENCHMARKS.md).
// After the commit, a waiter can never be woken before the function's
// writes are visible (TestQueueAwaitNeverBeforeTheFunctionCommitted); a
// process that dies between its commit and the notification only delays
// the waiters to their next read of the table (outcome.WithPollInterval).
type afterCommitNotifier struct {
	mu               sync.Mutex
	running, pending bool

	// Hooks of the package's tests; nil in a real store.
	send  func()              // instead of the NOTIFY
	now   func() time.Time    // instead of time.Now
	sleep func(time.Duration) // instead of time.Sleep
}

// notifyAfterCommit makes an OutcomeStore's writes notify nobody: its
// caller calls notifyCommitted after the commit. Subscribe listens as
// every OutcomeStore's does.
func notifyAfterCommit() Option { return func(o *options) { o.afterCommit = true } }

// notifyCommitted notifies the store's channel soon: now, if no
// notification is on its way, or notifyGap after the start of the one on
// its way (at once if that one took longer). It never blocks; the
// notification runs in a goroutine that ends when none is pending.
func (s *OutcomeStore) notifyCommitted() {
	n := &s.after
	n.mu.Lock()
	if n.running {
		n.pending = true
		n.mu.Unlock()
		return
	}
	n.running = true
	n.mu.Unlock()
	go func() {
		now, sleep := time.Now, time.Sleep
		if n.now != nil {
			now, sleep = n.now, n.sleep
		}
		for {
			began := now()
			s.sendNotify()
			// A notification slower than the gap: the next one at once.
			sleep(notifyGap - now().Sub(began))
			n.mu.Lock()
			if !n.pending {
				n.running = false
				n.mu.Unlock()
				return
			}
			n.pending = false
			n.mu.Unlock()
		}
	}()
}

// sendNotify sends one NOTIFY of the store's channel, bounded by the
// store's timeout; a failure is logged, and only delays the waiters to
// their next read.
func (s *OutcomeStore) sendNotify() {
	if s.after.send != nil {
		s.after.send()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	_, err := s.pool.Exec(ctx, s.q.notifyNow)
	cancel()
	if err != nil && s.logger != nil {
		s.logger.LogAttrs(context.Background(), slog.LevelWarn,
			"pgstore: notifying the outcome tracker's waiters failed; they read the table at their next poll",
			slog.String("error", err.Error()))
	}
}
