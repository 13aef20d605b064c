package pgstore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// The outbox is how a delivery is answered as fast as a single INSERT
// allows (issue 34's floor). Enqueue writes one row, the event's id (unique
// for the retention) and its body, and answers; a row not yet moved is
// waiting. A started Queue's mover then takes waiting rows in batches and,
// in one transaction, marks them moved and inserts their River jobs. A
// row is therefore moved once, whichever process moves it, and is never
// lost: a move that fails or dies rolls back, and the row waits for the
// next one (TestQueueOutboxMovesEachEventOnce). A job holds the event's id
// alone: the body stays in the row, where the worker reads it, until the
// function's transaction commits, which clears it (queue_worker.go). So
// River's job table, and River UI, hold no personal data, and each state
// a job goes through rewrites a few bytes of arguments, not the event
// under River's GIN index of them. A moved row keeps its id until the
// purge: that is the uniqueness.
//
// The mover moves no more than River's workers can soon take: it keeps at
// most moveRoomPerWorker available jobs per worker of its process in
// River, so that a burst of deliveries waits in the table (one narrow
// write per event) instead of loading River's indexed job table while
// the workers are busy (TestQueueOutboxHoldsBackWhileWorkersAreBusy); and
// once River holds a stock, it moves only when there is room for a batch
// of one per worker, so that slow functions do not cost a move each.

// movePoll is how often a mover looks at the outbox and at River's
// available jobs when its last look moved something; each look that finds
// nothing to move doubles the wait, up to moveIdlePoll. An Enqueue in the
// same process wakes it at once, so a process that receives its own
// deliveries moves them without waiting, and so does every
// QueueConfig.Workers-th job its workers finish; a delivery
// received by another process (a receiver that runs no workers) reaches
// River within moveIdlePoll plus moveGather. Every look is one statement
// outside any transaction (look); only a look that finds an event waiting
// and room for it opens a move's transaction.
const (
	movePoll     = 100 * time.Millisecond
	moveIdlePoll = time.Second
)

// moveQuiet and moveGather: a mover that finds waiting events it did not
// receive itself moves them once the Queue's table has received nothing
// for moveQuiet, or once the oldest of them has waited moveGather
// (gatherFor).
const (
	moveQuiet  = 50 * time.Millisecond
	moveGather = 500 * time.Millisecond
)

// gatherFor is how long a mover waits before it looks again instead of
// moving, given how long ago the newest and the oldest waiting events
// were enqueued (by the database's clock): 0 once the table has been quiet
// for moveQuiet or the oldest has waited moveGather. In the recommended
// set-up, receivers in processes that run no workers, a burst of
// deliveries is so answered without River's work for it (a move, River's
// fetches, jobs beginning) on the same database: measured, that work
// during a burst made its slowest answers up to twice the floor's
// (BENCHMARKS.md). What a process received itself it moves at once
// (moveLoop), its own Enqueue waking it.
func gatherFor(newest, oldest time.Duration) time.Duration {
	if newest >= moveQuiet || oldest >= moveGather {
		return 0
	}
	return min(moveQuiet-newest, moveGather-oldest, moveGather)
}

// moveRoomPerWorker is how many available jobs per worker of this process
// the mover lets River hold before it stops moving.
const moveRoomPerWorker = 4

// mover moves outbox rows into River while a Queue is started.
type mover struct {
	received chan struct{} // an Enqueue of this process inserted an event
	freed    chan struct{} // this process's workers finished a batch of jobs
	finished atomic.Int64  // jobs this process finished (finishedJob)

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func newMover() mover {
	return mover{received: make(chan struct{}, 1), freed: make(chan struct{}, 1)}
}

// poke sends on ch without waiting.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// finishedJob counts a job this process finished and wakes the mover once
// per QueueConfig.Workers of them: room for a batch may have opened.
func (q *Queue) finishedJob() {
	if q.move.finished.Add(1)%int64(q.cfg.Workers) == 0 {
		poke(q.move.freed)
	}
}

// startMover starts moving outbox rows into River until stopMover.
func (q *Queue) startMover(ctx context.Context) {
	q.move.mu.Lock()
	defer q.move.mu.Unlock()
	if q.move.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	q.move.cancel, q.move.done = cancel, done
	go func() {
		defer close(done)
		q.moveLoop(ctx)
	}()
}

// stopMover stops the mover and waits until its move in flight ended
// (committed or rolled back), or until ctx ends.
func (q *Queue) stopMover(ctx context.Context) error {
	q.move.mu.Lock()
	cancel, done := q.move.cancel, q.move.done
	q.move.cancel, q.move.done = nil, nil
	q.move.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// moveLoop looks, and moves while there is something to move and room for
// it, then waits: for its timer (movePoll after a look that moved, twice
// the last wait after one that did not, up to moveIdlePoll; the gathering's
// end, see gatherFor), for a batch of finished jobs, or, unless River had
// no room at the last look, for an event this process received. So a
// burst of deliveries while the workers are busy costs no look per
// delivery.
func (q *Queue) moveLoop(ctx context.Context) {
	wait := movePoll
	t := time.NewTimer(0) // look at once on start
	defer t.Stop()
	failures := 0
	full := false
	for {
		received := q.move.received
		if full {
			received = nil
		}
		own := false // woken by an event this process received
		select {
		case <-ctx.Done():
			return
		case <-received:
			own = true
		case <-q.move.freed:
		case <-t.C:
		}
		moved := 0
		var gather time.Duration
		var err error
		for {
			var w outboxLook
			var n int
			if w, err = q.look(ctx); err != nil || !w.waiting || w.room == 0 {
				full = err == nil && w.waiting
				break
			}
			full = false
			if !own {
				if gather = gatherFor(w.newest, w.oldest); gather > 0 {
					break
				}
			}
			if n, err = q.moveOnce(ctx); err != nil || n == 0 {
				break // n == 0: other movers hold the waiting rows
			}
			moved += n
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			if q.cfg.Logger != nil && (failures == 1 || failures%100 == 0) {
				q.cfg.Logger.LogAttrs(ctx, slog.LevelWarn,
					"pgstore: moving received events into River failed; they stay in the Queue's table and are moved once the database answers",
					slog.String("table", q.cfg.Table), slog.Int("failures", failures), slog.String("error", err.Error()))
			}
		} else {
			failures = 0
		}
		switch {
		case gather > 0:
			t.Reset(gather)
			continue // the next look is the gathering's, not an idle one
		case moved > 0:
			wait = movePoll
		default:
			wait = min(2*wait, moveIdlePoll)
		}
		t.Reset(wait)
	}
}

// outboxLook is what a look saw: whether an event waits to be moved, how
// many River has room for now (0 below a batch: see outboxQueries), and
// how long ago the newest and the oldest waiting events were enqueued.
type outboxLook struct {
	waiting        bool
	room           int
	newest, oldest time.Duration
}

// look reports, in one statement outside any transaction, what waits to be
// moved and how much room River has (outboxLook).
func (q *Queue) look(ctx context.Context) (outboxLook, error) {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	var newest, oldest *int64 // microseconds; NULL when nothing waits
	var w outboxLook
	if err := q.pool.QueryRow(ctx, q.q.peek, q.moveBatch(), QueueName, q.cfg.Workers).Scan(&newest, &oldest, &w.room); err != nil {
		return outboxLook{}, err
	}
	if newest != nil && oldest != nil {
		w.waiting = true
		w.newest, w.oldest = time.Duration(*newest)*time.Microsecond, time.Duration(*oldest)*time.Microsecond
	}
	return w, nil
}

// moveBatch is the most rows one move takes: the room it keeps in River.
func (q *Queue) moveBatch() int { return moveRoomPerWorker * q.cfg.Workers }

// moveBegin begins a move's transaction, in the same round trip, with
// synchronous_commit off for it alone: its commit returns before its WAL
// is flushed, so it adds no flush of its own for the deliveries' commits
// to wait behind (with a 6 s function, a burst's answers at p99 were
// 1.93x the floor's with the moves' flushes, 1.63x without: BENCHMARKS.md).
// What that risks is safe: a crash loses only a whole move (PostgreSQL
// replays or drops a transaction entirely), and a lost move is one that
// never happened, its rows still waiting with their bodies, moved again
// after the restart (TestQueueMoveLostInACrashIsMovedAgain). Nothing can
// depend on a move that is not yet flushed: a worker's commit,
// synchronous, flushes the WAL up to itself, and so the move of its job
// first.
const moveBegin = "BEGIN; SET LOCAL synchronous_commit = off"

// moveOnce moves up to the room River has left into River, in one
// transaction, and returns how many rows it moved.
func (q *Queue) moveOnce(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	tx, err := q.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: moveBegin})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, q.q.take, q.moveBatch(), QueueName, q.cfg.Workers)
	if err != nil {
		return 0, err
	}
	var jobs []river.InsertManyParams
	opts := &river.InsertOpts{Queue: QueueName}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		jobs = append(jobs, river.InsertManyParams{Args: eventArgs{ID: id}, InsertOpts: opts})
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	if _, err := q.client.InsertManyTx(ctx, tx, jobs); err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return len(jobs), nil
}

// outboxQueries are the outbox's statements on the Queue's table (see
// buildQueueQueries) and River's job table.
func outboxQueries(table, jobs string) (enqueue, take, peek string) {
	// A duplicate finds its id and inserts nothing: the statement writes
	// nothing and its commit no WAL (TestWALPerDelivery). It first looks
	// in its snapshot, which never waits: ON CONFLICT alone would wait
	// for a mover that is marking the row moved to commit (its
	// transaction includes River's insert), and hold up the answer to a
	// duplicate delivery for it. ON CONFLICT still settles two
	// first deliveries at once.
	enqueue = `INSERT INTO ` + table + ` (event_id, body) SELECT $1::text, $2::bytea
WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` WHERE event_id = $1::text) ON CONFLICT (event_id) DO NOTHING`
	// The room is $1 less River's available jobs of the queue (counted up
	// to $1 on its fetching index), and counts only from $3 (a move of
	// fewer rows waits until the workers took more of River's stock, so
	// that moves come in batches); the waiting rows come from the partial
	// index of waiting rows, oldest first; SKIP LOCKED lets the movers of
	// several processes take disjoint rows.
	room := `(SELECT CASE WHEN r >= $3 THEN r ELSE 0 END FROM (SELECT $1 - count(*) AS r FROM (SELECT 1 FROM ` + jobs +
		` WHERE state = 'available' AND queue = $2 LIMIT $1) a) b)`
	take = `WITH taken AS (
    SELECT event_id FROM ` + table + ` WHERE NOT moved ORDER BY enqueued_at
    LIMIT ` + room + ` FOR UPDATE SKIP LOCKED
)
UPDATE ` + table + ` t SET moved = true FROM taken WHERE t.event_id = taken.event_id RETURNING t.event_id`
	// The ages of the newest and the oldest waiting rows, in microseconds
	// by the server's clock (the clock of enqueued_at), read at the two
	// ends of the partial index of waiting rows.
	age := func(agg string) string {
		return `(SELECT (extract(epoch FROM clock_timestamp() - ` + agg + `(enqueued_at)) * 1e6)::bigint FROM ` + table + ` WHERE NOT moved)`
	}
	peek = `SELECT ` + age("max") + `, ` + age("min") + `, ` + room
	return enqueue, take, peek
}
