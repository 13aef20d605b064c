package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// holdID inserts ev's id into q's table in a transaction left open, as
// another replica's insert on its way: an insert of the same id waits for
// it. The returned function rolls it back (at the latest when the test
// ends).
func holdID(tb testing.TB, pool *pgxpool.Pool, q *testQueue, ev *payments.Event) func() {
	tb.Helper()
	tx, err := pool.Begin(testCtx(tb))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(testCtx(tb), "INSERT INTO "+q.table+" (event_id, body) VALUES ($1, $2)", ev.ID, ev.RawJSON()); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { _ = tx.Rollback(context.Background()) }) }
	tb.Cleanup(release)
	return release
}

// enqueued is an Enqueue on its way: its result once it returned.
type enqueued struct {
	done chan struct{}
	res  enqueueResult
}

type enqueueResult struct {
	inserted bool
	err      error
}

// enqueue enqueues ev in a goroutine, through Reconcile so as to learn
// whether it wrote the row.
func enqueue(q *pgstore.Queue, ev *payments.Event) *enqueued {
	e := &enqueued{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		res, err := q.Reconcile(context.Background(), func(yield func(*payments.Event, error) bool) { yield(ev, nil) })
		e.res = enqueueResult{inserted: res.Processed == 1, err: err}
	}()
	return e
}

func (e *enqueued) wait(tb testing.TB, what string) enqueueResult {
	tb.Helper()
	select {
	case <-e.done:
		return e.res
	case <-time.After(time.Minute): // a bound for a loaded machine, not a measurement
		tb.Fatalf("%s: not returned within a minute", what)
		return enqueueResult{}
	}
}

func (e *enqueued) returned() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// gatherBehind fills q's inserts in flight with Enqueues of ids held by
// open transactions, then enqueues events, which so wait to be gathered.
// It returns the Enqueues of events and the functions that release the
// held ones, the first of which sends the gathering; what the test does not
// release is released when it ends.
func gatherBehind(t *testing.T, pool *pgxpool.Pool, q *testQueue, events []*payments.Event) ([]*enqueued, []func()) {
	t.Helper()
	var releases []func()
	for i, held := range newEvents(t, pgstore.GatherInFlight) {
		releases = append(releases, holdID(t, pool, q, held))
		enqueue(q.Queue, held)
		eventually(t, time.Minute, "an insert in flight", func() bool {
			inFlight, waiting := q.Gathering()
			return inFlight == i+1 && waiting == 0
		})
	}
	out := make([]*enqueued, len(events))
	for i, ev := range events {
		out[i] = enqueue(q.Queue, ev)
		eventually(t, time.Minute, "an Enqueue waiting", func() bool {
			_, waiting := q.Gathering()
			return waiting == i+1
		})
	}
	return out, releases
}

// nop is a function that does nothing with an event.
func nop(context.Context, pgx.Tx, *payments.Event) error { return nil }

// gatherQueue is a Queue of nop whose log lines the test reads. Its
// Timeout is a minute, not DefaultTimeout's 2 s: the tests hold its
// inserts up on purpose for as long as a loaded machine takes to line up
// the next ones.
func gatherQueue(tb testing.TB, pool *pgxpool.Pool) (*testQueue, *testlog.Buffer) {
	tb.Helper()
	logs := &testlog.Buffer{}
	return newQueue(tb, pool, nop, &pgstore.QueueConfig{Timeout: time.Minute, Logger: slog.New(slog.NewTextHandler(logs, nil))}), logs
}

// xminOf is the id of the transaction that wrote ev's row.
func xminOf(tb testing.TB, pool *pgxpool.Pool, q *testQueue, ev *payments.Event) string {
	tb.Helper()
	var xmin string
	if err := pool.QueryRow(testCtx(tb), "SELECT xmin::text FROM "+q.table+" WHERE event_id = $1", ev.ID).Scan(&xmin); err != nil {
		tb.Fatalf("the row of %s: %v", ev.ID, err)
	}
	return xmin
}

// Deliveries that arrive while the Queue's inserts are in flight wait, and
// are then inserted together: one statement, one commit (the same xmin),
// each event reported as inserted once, also when two deliveries of one
// event are gathered together.
func TestQueueGathersConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q, _ := gatherQueue(t, pool)
	events := newEvents(t, 3)
	waiting, releases := gatherBehind(t, pool, q, append(events, events[1]))
	releases[0]()
	for _, i := range []int{0, 2} {
		if res := waiting[i].wait(t, "a gathered Enqueue"); res.err != nil || !res.inserted {
			t.Errorf("event %d: inserted %v, error %v; want inserted", i, res.inserted, res.err)
		}
	}
	r1, r3 := waiting[1].wait(t, "a gathered Enqueue"), waiting[3].wait(t, "the second delivery of event 1")
	if r1.err != nil || r3.err != nil || r1.inserted == r3.inserted {
		t.Errorf("two deliveries of event 1: inserted %v and %v, errors %v and %v; want one inserted, no error", r1.inserted, r3.inserted, r1.err, r3.err)
	}
	want := xminOf(t, pool, q, events[0])
	for i, ev := range events[1:] {
		if got := xminOf(t, pool, q, ev); got != want {
			t.Errorf("event %d committed by transaction %s, event 0 by %s: want one commit for the gathering", i+1, got, want)
		}
	}
	for _, release := range releases[1:] {
		release()
	}
	eventually(t, time.Minute, "the Queue's inserts ended", func() bool {
		inFlight, waiting := q.Gathering()
		return inFlight == 0 && waiting == 0
	})
}

// A duplicate gathered with a new event is a read: it is answered once the
// ids already recorded are found, while the new event's INSERT still waits
// (here for another transaction holding its id), not at that INSERT's
// commit and its WAL flush.
func TestQueueGatheredDuplicateWaitsForNoCommit(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q, _ := gatherQueue(t, pool)
	events := newEvents(t, 2)
	dup, fresh := events[0], events[1]
	if err := q.Enqueue(testCtx(t), dup); err != nil {
		t.Fatal(err)
	}
	releaseFresh := holdID(t, pool, q, fresh)
	waiting, releases := gatherBehind(t, pool, q, []*payments.Event{fresh, dup})
	releases[0]()
	if res := waiting[1].wait(t, "the duplicate"); res.err != nil || res.inserted {
		t.Errorf("duplicate: inserted %v, error %v; want found, no error", res.inserted, res.err)
	}
	if waiting[0].returned() {
		t.Fatalf("the new event returned (%+v) while another transaction held its id", waiting[0].res)
	}
	releaseFresh()
	if res := waiting[0].wait(t, "the new event"); res.err != nil || !res.inserted {
		t.Errorf("new event: inserted %v, error %v; want inserted", res.inserted, res.err)
	}
}

// When the server refuses a gathering's INSERT because of one row (here a
// trigger of the merchant's), each event is inserted alone: the others
// land, and only the refused one fails, with ErrUnavailable (503).
func TestQueueGatheredRefusalIsItsOwn(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q, logs := gatherQueue(t, pool)
	events := newEvents(t, 3)
	q.beforeInsert(t, pool, "refuse", q.table, "ROW",
		`IF NEW.event_id = '`+events[1].ID+`' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW;`)
	waiting, releases := gatherBehind(t, pool, q, events)
	releases[0]()
	for i, e := range waiting {
		res := e.wait(t, "a gathered Enqueue")
		switch {
		case i == 1 && (res.err == nil || !errors.Is(res.err, webhook.ErrUnavailable)):
			t.Errorf("the refused event: error %v; want one matching webhook.ErrUnavailable", res.err)
		case i != 1 && (res.err != nil || !res.inserted):
			t.Errorf("event %d: inserted %v, error %v; want inserted", i, res.inserted, res.err)
		}
	}
	for i, ev := range events {
		if n, want := rowsOf(t, pool, q.table, ev.ID), map[bool]int{true: 0, false: 1}[i == 1]; n != want {
			t.Errorf("event %d: %d rows, want %d", i, n, want)
		}
	}
	if got := logs.String(); !strings.Contains(got, "refused a gathering of deliveries; inserting each alone") || !strings.Contains(got, "events=3") {
		t.Errorf("want a warning of the refused gathering of 3, logged:\n%s", got)
	}
}

// Two replicas' Queues gathering the same two new ids in opposite orders,
// at once, never wait for each other in a cycle: a trigger makes each
// insert of the two take half a second, so that, inserted in the order they
// were gathered, each gathering would hold one id and wait for the other
// (a deadlock, which the server breaks after a second and the Queue
// answers by inserting each alone, with a warning). In the order of their
// ids, one waits for the other's commit and finds both: no warning, every
// Enqueue without an error, each id inserted once.
func TestQueueGatheredInsertsNeverDeadlock(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	q, logs := gatherQueue(t, pool)
	other := *q
	other.Queue = q.replica(t, newPool(t, testPoolURL(t), 4), nop)
	events := newEvents(t, 2)
	x, y := events[0], events[1]
	q.beforeInsert(t, pool, "slow", q.table, "ROW",
		`IF NEW.event_id IN ('`+x.ID+`', '`+y.ID+`') THEN PERFORM pg_sleep(0.5); END IF; RETURN NEW;`)
	a, releaseA := gatherBehind(t, pool, q, []*payments.Event{x, y})
	b, releaseB := gatherBehind(t, pool, &other, []*payments.Event{y, x})
	releaseA[0]()
	releaseB[0]()
	inserted := map[string]int{}
	for i, e := range append(a, b...) {
		res := e.wait(t, "a gathered Enqueue")
		if res.err != nil {
			t.Errorf("Enqueue %d: %v", i, res.err)
		}
		if res.inserted {
			inserted[[]string{x.ID, y.ID, y.ID, x.ID}[i]]++
		}
	}
	if inserted[x.ID] != 1 || inserted[y.ID] != 1 {
		t.Errorf("inserted %v: want each id once", inserted)
	}
	if strings.Contains(logs.String(), "refused a gathering") {
		t.Errorf("a gathering was refused:\n%s", logs.String())
	}
}
