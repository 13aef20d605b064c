package pgstore_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// queueFrozenBound is the latest a delivery may be answered while the
// database is frozen: the Queue's Timeout (pgstore.DefaultTimeout, 2 s),
// which covers the pool's acquisition and every statement of the enqueue
// (pgx ends a statement at its context's deadline by closing the
// connection, with no word to the server), and 2 s for the scheduling of
// a machine at a load average of 20. Answers come from timers, not work.
const queueFrozenBound = pgstore.DefaultTimeout + 2*time.Second

// defaultPool is a pool with pgxpool's default size (the greater of 4 and
// the CPUs), as a merchant who sets nothing gets; closed when the test ends.
func defaultPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// timedAnswer is one delivery: its event, status and when it was sent and
// answered.
type timedAnswer struct {
	body       []byte
	code       int
	start, end time.Time
	answered   bool
}

// sendUntil keeps up to senders deliveries in flight at once (each sender
// delivers a new event afterOK after its last was answered 200, 50 ms after
// any other answer) until stop is closed, and returns every delivery.
func sendUntil(t *testing.T, h http.Handler, senders int, afterOK, limit time.Duration, stop <-chan struct{}) func() []timedAnswer {
	var (
		mu  sync.Mutex
		all []timedAnswer
		wg  sync.WaitGroup
	)
	ended := make(chan struct{}) // the test ended (failed) before stop
	t.Cleanup(func() { close(ended) })
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-ended:
					return
				default:
				}
				body := storetest.EventBody(storetest.NewEventID(t))
				start := time.Now()
				code, _, returned := storetest.DeliverWithin(h, body, limit)
				mu.Lock()
				all = append(all, timedAnswer{body: body, code: code, start: start, end: time.Now(), answered: returned})
				mu.Unlock()
				if !returned {
					return // a hung delivery: reported by the caller
				}
				// A sender's pause before its next event: afterOK after a
				// 200, 50 ms after a failure.
				pause := afterOK
				if code != http.StatusOK {
					pause = 50 * time.Millisecond
				}
				time.Sleep(pause)
			}
		}()
	}
	return func() []timedAnswer {
		wg.Wait()
		return all
	}
}

// redeliver delivers every answer's event that did not get 200 again, as
// the service does, until it gets 200.
func redeliver(t *testing.T, h http.Handler, answers []timedAnswer) {
	t.Helper()
	for _, a := range answers {
		if a.code == http.StatusOK {
			continue
		}
		var got storetest.Answers
		if err := storetest.Retry(context.Background(), func() http.Handler { return h }, a.body, &got, 200*time.Millisecond, time.Minute); err != nil {
			t.Fatalf("redelivery after the fault: %v (answers %s)", err, got.String())
		}
	}
}

// processedOnce waits until every event of answers has its merchant row and
// every job completed, then checks each event has exactly one row.
func processedOnce(t *testing.T, q *testQueue, pool *pgxpool.Pool, paid string, answers []timedAnswer) {
	t.Helper()
	ids := map[string]bool{}
	for _, a := range answers {
		ev, err := payments.ParseEvent(a.body)
		if err != nil {
			t.Fatal(err)
		}
		ids[ev.ID] = true
	}
	eventually(t, 2*time.Minute, "every event's job completed", func() bool {
		s := q.jobStates(t, pool)
		return s["completed"] >= len(ids) && len(s) == 1
	})
	rows, err := pool.Query(testCtx(t), "SELECT event_id, count(*) FROM "+paid+" GROUP BY event_id")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		counts[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	never, twice := 0, 0
	for id := range ids {
		switch counts[id] {
		case 0:
			never++
		case 1:
		default:
			twice++
		}
	}
	t.Logf("%d events: never processed %d, effects twice %d; jobs %v", len(ids), never, twice, q.jobStates(t, pool))
	if never > 0 || twice > 0 {
		t.Errorf("%d events never processed, %d processed twice; want every one once", never, twice)
	}
}

// slowPaid is insertPaid after d of work in the transaction, so that jobs
// are running when the fault comes.
func slowPaid(table string, d time.Duration) pgstore.TxEventFunc {
	return func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
		return insertPaid(table)(ctx, tx, ev)
	}
}

// A frozen PostgreSQL (SIGSTOP: connections open, nothing answers) under a
// Queue on a pool of pgxpool's default size, with its workers running and
// three times as many deliveries in flight as the pool has connections:
// every delivery, in flight when it froze or arriving while it is frozen,
// is answered 503 within queueFrozenBound (the Queue's Timeout, 2 s, with
// room for a loaded machine), never 500, never hung; after the thaw, the
// service's redeliveries get 200 and every event is processed exactly once.
func TestQueueFrozenDatabase(t *testing.T) {
	t.Parallel()
	srv := testservers.StartPostgres(t)
	pool := defaultPool(t, srv.URL())
	paid := merchantTable(t, pool)
	q := newQueue(t, pool, slowPaid(paid, 20*time.Millisecond), nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	senders := 3 * int(pool.Config().MaxConns)

	stop := make(chan struct{})
	wait := sendUntil(t, h, senders, 0, queueFrozenBound+20*time.Second, stop)
	time.Sleep(500 * time.Millisecond) // deliveries and jobs under way
	frozenAt := time.Now()
	srv.Freeze(t)
	// Frozen past the bound, so that nothing in flight can finish by the
	// thaw; new deliveries keep arriving meanwhile.
	time.Sleep(queueFrozenBound + 2*time.Second)
	close(stop)
	answers := wait()
	thawedAt := time.Now()
	srv.Thaw(t)

	inFlight, arriving := 0, 0
	var slowest time.Duration
	for _, a := range answers {
		took := a.end.Sub(a.start)
		hitByFreeze := a.end.After(frozenAt) && a.start.Before(thawedAt)
		if !a.answered {
			t.Errorf("a delivery hung: no answer after %v", took.Round(time.Millisecond))
			continue
		}
		if a.code != http.StatusOK && a.code != http.StatusServiceUnavailable {
			t.Errorf("a delivery was answered %d after %v; want 200 or 503", a.code, took.Round(time.Millisecond))
		}
		if !hitByFreeze {
			continue
		}
		switch {
		case a.start.Before(frozenAt):
			inFlight++
		default:
			arriving++
		}
		slowest = max(slowest, took)
		// A delivery whose enqueue committed in the instant of the freeze
		// may still get its 200.
		if took > queueFrozenBound {
			t.Errorf("a delivery hit by the freeze was answered %d after %v; want 503 within %v", a.code, took.Round(time.Millisecond), queueFrozenBound)
		}
		if a.code == http.StatusOK && a.end.After(frozenAt.Add(time.Second)) {
			t.Errorf("a delivery got 200 %v into the freeze", a.end.Sub(frozenAt).Round(time.Millisecond))
		}
	}
	t.Logf("pool of %d connections, %d senders: %d deliveries, %d in flight at the freeze, %d arriving while frozen; the slowest answered after %v",
		pool.Config().MaxConns, senders, len(answers), inFlight, arriving, slowest.Round(time.Millisecond))
	if inFlight <= int(pool.Config().MaxConns) || arriving == 0 {
		t.Fatalf("%d deliveries in flight at the freeze (want more than the pool's %d), %d arriving: the test proved nothing",
			inFlight, pool.Config().MaxConns, arriving)
	}
	redeliver(t, h, answers)
	processedOnce(t, q, pool, paid, answers)
}

// A PostgreSQL restarted (immediate stop, down for 3 s) while the Queue's
// workers run jobs and deliveries keep coming: deliveries get 200 or 503,
// never 500 and never hung; after the restart the service's redeliveries
// get 200, and every event is processed exactly once: a job whose
// transaction the restart broke rolled back and runs again.
func TestQueueRestartedDatabase(t *testing.T) {
	t.Parallel()
	srv := testservers.StartPostgres(t)
	pool := defaultPool(t, srv.URL())
	paid := merchantTable(t, pool)
	var running atomic.Int64
	fn := slowPaid(paid, 200*time.Millisecond)
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		running.Add(1)
		defer running.Add(-1)
		return fn(ctx, tx, ev)
	}, nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	stop := make(chan struct{})
	// 100 ms between a sender's events keeps them a few hundred: each is
	// processed after the restart, at the function's pace.
	wait := sendUntil(t, h, 3*int(pool.Config().MaxConns), 100*time.Millisecond, queueFrozenBound+20*time.Second, stop)
	eventually(t, time.Minute, "a job running", func() bool { return running.Load() > 0 })
	srv.Stop(t)
	time.Sleep(3 * time.Second)
	srv.Start(t)
	time.Sleep(time.Second)
	close(stop)
	answers := wait()
	unavailable := 0
	for _, a := range answers {
		if !a.answered {
			t.Errorf("a delivery hung: no answer after %v", a.end.Sub(a.start).Round(time.Millisecond))
		}
		switch a.code {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			unavailable++
		default:
			t.Errorf("a delivery was answered %d; want 200 or 503", a.code)
		}
	}
	t.Logf("%d deliveries, %d answered 503", len(answers), unavailable)
	if unavailable == 0 {
		t.Fatal("no delivery was answered 503: the restart hit nothing")
	}
	redeliver(t, h, answers)
	processedOnce(t, q, pool, paid, answers)
}
