package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// Enqueue gathers: deliveries that arrive while the Queue already has
// gatherInFlight inserts on their way wait, and the first insert to end
// sends them together, in one statement and one commit, so that a burst
// costs the database a commit per gathering rather than one per event
// (TestQueueGathersConcurrentDeliveries). A delivery that arrives while
// fewer are in flight is sent at once, alone, as a hand-written receiver
// would: gathering adds no wait to a quiet Queue.
const (
	// gatherInFlight is how many inserts one Queue keeps in flight at
	// once: two, so that one held up on the server (by another replica's
	// insert of the same id, until it commits) does not hold up the rest.
	gatherInFlight = 2
	// gatherRows and gatherBytes bound one gathering; it always takes at
	// least one event, whatever its size.
	gatherRows  = 64
	gatherBytes = 1 << 20
)

// gathered is one Enqueue: its event's stored id and body, and, once done
// is closed, whether its insert wrote the row and the error if it failed.
type gathered struct {
	id       string
	body     []byte
	done     chan struct{}
	inserted bool
	err      error
}

// gatherer is a Queue's inserts in flight and the Enqueues waiting for
// one to end.
type gatherer struct {
	mu       sync.Mutex
	waiting  []*gathered
	inFlight int
}

// add queues e and, when fewer than gatherInFlight inserts are in flight,
// returns the gathering its caller must send.
func (g *gatherer) add(e *gathered) []*gathered {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting = append(g.waiting, e)
	if g.inFlight >= gatherInFlight {
		return nil
	}
	g.inFlight++
	return g.takeLocked()
}

// next returns the gathering to send after one ended, or nil when nothing
// waits (the insert is then no longer in flight).
func (g *gatherer) next() []*gathered {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		g.inFlight--
		return nil
	}
	return g.takeLocked()
}

func (g *gatherer) takeLocked() []*gathered {
	n, size := 0, 0
	for n < len(g.waiting) && n < gatherRows && (n == 0 || size+len(g.waiting[n].body) <= gatherBytes) {
		size += len(g.waiting[n].body)
		n++
	}
	batch := g.waiting[:n:n]
	g.waiting = g.waiting[n:]
	if len(g.waiting) == 0 {
		g.waiting = nil // let the backing array go
	}
	return batch
}

// drop takes e out of the waiting Enqueues, if it is still there.
func (g *gatherer) drop(e *gathered) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range g.waiting {
		if w == e {
			g.waiting = append(g.waiting[:i:i], g.waiting[i+1:]...)
			return
		}
	}
}

// insertGathered records one event, gathered with those that wait beside
// it, and reports whether it wrote the row. It returns when ctx ends even
// if the insert is still on its way: the insert then ends by itself,
// within QueueConfig.Timeout, and a redelivery finds whether it landed.
func (q *Queue) insertGathered(ctx context.Context, id string, body []byte) (bool, error) {
	e := &gathered{id: id, body: body, done: make(chan struct{})}
	if batch := q.gather.add(e); batch != nil {
		// Its own goroutine, on a context of its own: the caller that
		// started it may go at its deadline while the others still wait.
		go q.sendGathered(context.WithoutCancel(ctx), batch)
	}
	select {
	case <-e.done:
		return e.inserted, e.err
	case <-ctx.Done():
		q.gather.drop(e)
		select {
		case <-e.done: // it ended as ctx did
			return e.inserted, e.err
		default:
			return false, ctx.Err()
		}
	}
}

// sendGathered sends batch, then each gathering that waits, until none
// does.
func (q *Queue) sendGathered(ctx context.Context, batch []*gathered) {
	for ; batch != nil; batch = q.gather.next() {
		sctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
		q.insertBatch(sctx, batch)
		cancel()
	}
}

// insertBatch inserts a gathering and closes each one's done. One event is
// one statement (its duplicate reads its id in its snapshot and writes
// nothing). Several are two: a read finds those already recorded, which
// are answered at once, as a duplicate that is a read waits for no WAL
// flush (TestQueueGatheredDuplicateWaitsForNoCommit); then one INSERT of
// the others, in the order of their ids, so that two gatherings of
// overlapping ids, in two processes, never wait for each other in a
// cycle (TestQueueGatheredInsertsNeverDeadlock).
func (q *Queue) insertBatch(ctx context.Context, batch []*gathered) {
	if len(batch) == 1 {
		q.insertOne(ctx, batch[0])
		return
	}
	ids := make([]string, len(batch))
	for i, e := range batch {
		ids[i] = e.id
	}
	found, err := q.queryIDs(ctx, q.q.find, ids)
	rest := batch[:0:0]
	for _, e := range batch {
		switch {
		case err != nil:
			e.err = err
			close(e.done)
		case found[e.id] > 0:
			close(e.done)
		default:
			rest = append(rest, e)
		}
	}
	switch len(rest) {
	case 0:
		return
	case 1:
		q.insertOne(ctx, rest[0])
		return
	}
	ids, bodies := ids[:0], make([][]byte, len(rest))
	for i, e := range rest {
		ids = append(ids, e.id)
		bodies[i] = e.body
	}
	inserted, err := q.queryIDs(ctx, q.q.enqueueMany, ids, bodies)
	var refused *pgconn.PgError
	if errors.As(err, &refused) {
		// The server refused the statement (a trigger or constraint of
		// the merchant's on one row, say): each event alone, so that a
		// row's refusal is its own alone.
		if q.cfg.Logger != nil {
			q.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "pgstore: the database refused a gathering of deliveries; inserting each alone",
				slog.String("table", q.cfg.Table), slog.Int("events", len(rest)), slog.String("error", err.Error()))
		}
		for _, e := range rest {
			q.insertOne(ctx, e)
		}
		return
	}
	for _, e := range rest {
		// Two Enqueues of one id in one gathering: the first wrote it.
		e.err, e.inserted = err, inserted[e.id] > 0
		if e.inserted {
			inserted[e.id]--
		}
		close(e.done)
	}
}

func (q *Queue) insertOne(ctx context.Context, e *gathered) {
	tag, err := q.pool.Exec(ctx, q.q.enqueue, e.id, e.body)
	e.err, e.inserted = err, err == nil && tag.RowsAffected() > 0
	close(e.done)
}

// queryIDs runs a statement that returns event ids, and counts them.
func (q *Queue) queryIDs(ctx context.Context, sql string, args ...any) (map[string]int, error) {
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	ids := map[string]int{}
	var id string
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids[id]++
	}
	return ids, rows.Err()
}
