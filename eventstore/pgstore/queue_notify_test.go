package pgstore_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// The Queue notifies after its jobs' commits: Await in another process is
// woken by the notification, not by its poll. With a poll interval of an
// hour, its first read after the one it starts with would come 36 s later
// (the interval over 100, doubling): past the test's 30 s.
func TestQueueAwaitWokenByNotifyAfterCommit(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	release := make(chan struct{})
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		<-release // the commit comes after Await waits
		return insertPaid(paid)(ctx, tx, ev)
	}, nil)
	start(t, q.Queue)
	h64 := fnv.New64a()
	h64.Write([]byte(q.outcomes))
	listen := fmt.Sprintf(`LISTEN "payments_outcomes_%016x"`, h64.Sum64())
	tracker := q.replica(t, newPool(t, testPoolURL(t), 4), insertPaid(paid)).Tracker(outcometest.PollInterval(time.Hour))
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 3 { // one after the other: a notifier that ran once must run again
		id := storetest.NewEventID(t)
		body := storetest.EventBody(id)
		ev, err := payments.ParseEvent(body)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ev.Payment()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			res, err := tracker.Await(ctx, p.ID)
			if err == nil && res.State != outcome.StateCompleted {
				t.Errorf("Await %d: state %s", i, res.State)
			}
			done <- err
		}()
		if code := storetest.Deliver(h, body); code != http.StatusOK {
			t.Fatalf("delivery %d: %d", i, code)
		}
		// Await waits once its subscription listens (and, after the
		// first, a moment: the subscription outlives each Await).
		eventually(t, 20*time.Second, "the tracker's LISTEN", func() bool {
			var n int
			err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = $1", listen).Scan(&n)
			return err == nil && n > 0
		})
		time.Sleep(50 * time.Millisecond)
		select {
		case release <- struct{}{}:
		case <-ctx.Done():
			t.Fatalf("event %d: its function never ran", i)
		}
		if err := <-done; err != nil {
			t.Fatalf("Await %d: %v (not woken after the commit)", i, err)
		}
		if n := rowsOf(t, pool, paid, id); n != 1 {
			t.Fatalf("event %d: %d merchant rows when Await returned", i, n)
		}
	}
}

// notifyGate is a pgx tracer that counts the NOTIFYs a pool starts and
// holds the first one until released.
type notifyGate struct {
	started atomic.Int64
	hold    chan struct{}
}

func (g *notifyGate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "NOTIFY") && g.started.Add(1) == 1 {
		<-g.hold
	}
	return ctx
}

func (g *notifyGate) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A worker's commits while another worker's NOTIFY is in flight (sent,
// maybe, before them) wait for it, then exactly one of them sends a NOTIFY,
// which starts after all of their commits: every commit is followed by a
// notification, no more than one is in flight, and no worker sends more
// than one.
func TestQueueNotifiesAfterEveryCommit(t *testing.T) {
	t.Parallel()
	g := &notifyGate{hold: make(chan struct{})}
	cfg, err := pgxpool.ParseConfig(testPoolURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = g
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.NewOutcomeStore(pool, pgstore.WithTable(uniqueName("outcomes_")))
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	go func() { s.SendNotify(); close(first) }() // the commit of one worker
	eventually(t, time.Minute, "the first NOTIFY started", func() bool { return g.started.Load() == 1 })
	var later sync.WaitGroup
	for range 3 { // three more workers commit while it is in flight
		later.Add(1)
		go func() { defer later.Done(); s.SendNotify() }()
	}
	time.Sleep(100 * time.Millisecond) // a broken gate would start theirs now
	if n := g.started.Load(); n != 1 {
		t.Fatalf("%d NOTIFYs started while the first was in flight, want none", n-1)
	}
	close(g.hold)
	within(t, first, "the first worker's notification sent")
	waited := make(chan struct{})
	go func() { later.Wait(); close(waited) }()
	within(t, waited, "the three later workers' notification sent")
	if n := g.started.Load(); n != 2 {
		t.Errorf("%d NOTIFYs in all, want 2: the first, and one after the commits that came while it was in flight", n)
	}
	s.SendNotify() // nothing in flight: one NOTIFY at once
	if n := g.started.Load(); n != 3 {
		t.Errorf("%d NOTIFYs after a commit with none in flight, want 3", n)
	}
}
