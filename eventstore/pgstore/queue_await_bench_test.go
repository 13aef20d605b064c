package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
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
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// awaitInFlight is how many payments BenchmarkQueueAwait keeps in flight:
// as many Awaits wait at once, each for a payment of its own.
const awaitInFlight = 64

// awaitDefaultFn is how long the merchant's function takes unless
// envQueueSlow says otherwise: short, so that CI's -benchtime=100x runs in
// a few seconds.
const awaitDefaultFn = 50 * time.Millisecond

// BenchmarkQueueAwait measures issue 34's "Await in another process
// answers within 100 ms of the function's commit, and never before it".
// On a throwaway server of its own with production durability
// (configureFloorServer), two "processes" share one Queue's tables:
//
//   - the worker process: a Queue on its own pool with its workers started
//     (pgstore.DefaultWorkers) and a webhook.Handler over its Enqueue; the
//     merchant's function sleeps awaitDefaultFn (envQueueSlow: that long)
//     and then inserts the order row in its tx;
//   - the awaiting process: a Queue on another pool (pgxpool's default
//     size), never started, whose Tracker awaits; its subscription LISTENs
//     on a connection of that pool.
//
// awaitInFlight senders each take the next payment, start Await for it,
// deliver its signed payment.completed event to the handler and wait for
// Await's return; b.N payments in all, each an operation. Per payment it
// measures the time from the deciding commit to Await's return:
//
//   - p50_ms, p99_ms, max_ms: from the moment the function returned (its
//     last statement done), an upper bound: the fence, the outcome's
//     write, the job's completion and the commit come after it, so the
//     latency measured is at least the true one;
//   - ack-p50_ms, ack-p99_ms: from the moment the worker's COMMIT was
//     acknowledged (a tracer on the worker pool's connections), slightly
//     below the truth: the commit is visible to others just before its
//     acknowledgement reaches the worker.
//
// At every return of Await it reads the order row from the awaiting pool:
// before-commit counts the Awaits that returned while it was not there (or
// before the function had returned at all); any fails the benchmark.
func BenchmarkQueueAwait(b *testing.B) {
	fnTime, name := awaitDefaultFn, "fn-50ms"
	if v := os.Getenv(envQueueSlow); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration such as 6s", envQueueSlow, v)
		}
		fnTime, name = d, "fn-"+v
	}
	srv := testservers.StartPostgres(b)
	configureFloorServer(b, srv)
	admin := newPool(b, srv.URL(), 4)
	b.Run(name, func(b *testing.B) { runQueueAwait(b, srv.URL(), admin, fnTime) })
}

// awaitStamps are the moments of each payment's deciding event on the
// worker side, by payment id.
type awaitStamps struct {
	mu       sync.Mutex
	returned map[string]time.Time // the function returned
	acked    map[string]time.Time // the job's COMMIT was acknowledged
	conns    map[*pgx.Conn]string // the payment whose job's transaction a connection runs
	notified []notifySent         // the Queue's NOTIFYs after its commits
}

// notifySent is one NOTIFY of the worker process: when it was sent and
// when its answer came.
type notifySent struct{ sent, answered time.Time }

func newAwaitStamps() *awaitStamps {
	return &awaitStamps{returned: map[string]time.Time{}, acked: map[string]time.Time{},
		conns: map[*pgx.Conn]string{}}
}

// functionReturns is called by the function just before it returns nil.
func (s *awaitStamps) functionReturns(conn *pgx.Conn, payment string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.returned[payment] = now
	s.conns[conn] = payment
}

func (s *awaitStamps) get(payment string) (returned, acked time.Time, ok, ackOK bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	returned, ok = s.returned[payment]
	acked, ackOK = s.acked[payment]
	return returned, acked, ok, ackOK
}

// commitTracer stamps the acknowledgement of the COMMIT that ends a job's
// transaction on the worker pool (pgx sends "commit" and "rollback" as
// plain statements).
type commitTracer awaitStamps

type (
	commitKey struct{}
	notifyKey struct{}
)

func (t *commitTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	switch {
	case data.SQL == "commit", data.SQL == "rollback":
		return context.WithValue(ctx, commitKey{}, data.SQL)
	case strings.Contains(data.SQL, "NOTIFY"):
		return context.WithValue(ctx, notifyKey{}, time.Now())
	}
	return ctx
}

func (t *commitTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	now := time.Now()
	s := (*awaitStamps)(t)
	if sent, ok := ctx.Value(notifyKey{}).(time.Time); ok && data.Err == nil {
		s.mu.Lock()
		s.notified = append(s.notified, notifySent{sent, now})
		s.mu.Unlock()
		return
	}
	sql, ok := ctx.Value(commitKey{}).(string)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	payment, ok := s.conns[conn]
	if !ok {
		return
	}
	delete(s.conns, conn)
	if sql == "commit" && data.Err == nil && data.CommandTag.String() == "COMMIT" {
		s.acked[payment] = now
	}
}

// awaitRun is what one payment's sender saw: when Await returned, and
// when the worker's function returned and its commit was acknowledged.
type awaitRun struct {
	returned, acked, awaited time.Time
	beforeCommit             bool
}

func runQueueAwait(b *testing.B, url string, admin *pgxpool.Pool, fnTime time.Duration) {
	ctx := testCtx(b)
	paid := merchantTable(b, admin)
	stamps := newAwaitStamps()
	book := insertPaid(paid)
	fn := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		select { // the call to another service
		case <-time.After(fnTime):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := book(ctx, tx, ev); err != nil {
			return err
		}
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		stamps.functionReturns(tx.Conn(), p.ID)
		return nil
	}
	q := newQueue(b, admin, fn, nil)

	// The worker process.
	wcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	wcfg.MaxConns = pgstore.DefaultWorkers + 10 // the workers', River's and the deliveries'
	wcfg.ConnConfig.Tracer = (*commitTracer)(stamps)
	wpool, err := pgxpool.NewWithConfig(context.Background(), wcfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(wpool.Close)
	worker := q.replica(b, wpool, fn)
	h := webhook.NewHandler(storetest.Verifier(b), worker.Enqueue)
	start(b, worker)

	// The awaiting process: a pool of pgxpool's default size.
	app := uniqueName("await_")
	acfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	acfg.ConnConfig.RuntimeParams["application_name"] = app
	var reads pgCalls
	acfg.ConnConfig.Tracer = (*countingTracer)(&reads)
	apool, err := pgxpool.NewWithConfig(context.Background(), acfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(apool.Close)
	tracker := q.replica(b, apool, fn).Tracker()

	// An Await that never returns keeps the subscription up; the run
	// starts once it LISTENs, so that no payment pays for its start.
	sentinelCtx, stopSentinel := context.WithCancel(context.Background())
	sentinelDone := make(chan struct{})
	go func() {
		defer close(sentinelDone)
		_, _ = tracker.Await(sentinelCtx, "pay-never-comes")
	}()
	defer func() { stopSentinel(); <-sentinelDone }()
	eventually(b, time.Minute, "the awaiting process LISTENs", func() bool {
		var n int
		err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'", app).Scan(&n)
		return err == nil && n > 0
	})

	runs := make([]awaitRun, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	reads.trips.Store(0)
	b.ResetTimer()
	for range min(awaitInFlight, b.N) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				runs[i] = awaitOne(b, h, tracker, apool, paid, stamps, fnTime)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	// Each Await's reads, and the one that looks at the order row.
	b.ReportMetric(float64(reads.trips.Load())/float64(b.N), "reads/await")
	reportAwait(b, runs, stamps.notified)
}

// awaitOne runs one payment: Await in the awaiting process, its event
// delivered to the worker process's handler.
func awaitOne(b *testing.B, h *webhook.Handler, tracker *outcome.Tracker, apool *pgxpool.Pool, paid string,
	stamps *awaitStamps, fnTime time.Duration) awaitRun {
	id := storetest.NewEventID(b)
	body := storetest.EventBody(id)
	payment := "pay-" + id[:8] // as storetest.EventBody makes it
	ctx, cancel := context.WithTimeout(context.Background(), fnTime+2*time.Minute)
	defer cancel()
	type answer struct {
		at   time.Time
		rows int
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := tracker.Await(ctx, payment)
		at := time.Now()
		if err == nil && res.State != outcome.StateCompleted {
			b.Errorf("Await %s: state %s, want completed", payment, res.State)
		}
		// What the awaiting process sees of the order the moment Await
		// returned.
		var rows int
		if err == nil {
			err = apool.QueryRow(ctx, "SELECT count(*) FROM "+paid+" WHERE event_id = $1", id).Scan(&rows)
		}
		done <- answer{at, rows, err}
	}()
	if code := storetest.Deliver(h, body); code != 200 {
		b.Errorf("delivery of %s: %d, want 200", id, code)
	}
	a := <-done
	if a.err != nil {
		b.Errorf("Await %s: %v", payment, a.err)
		return awaitRun{}
	}
	returned, acked, ok, _ := stamps.get(payment)
	return awaitRun{returned: returned, acked: acked, awaited: a.at, beforeCommit: !ok || a.rows == 0}
}

// reportAwait reports the latencies' percentiles and the Awaits that
// returned before the commit, and fails the benchmark if there was one.
// Where the time goes, from the acknowledgement of the commit: to the end
// of the first NOTIFY sent after it (notify-p50_ms, notify-p99_ms: the
// Queue's gap between notifications and the NOTIFY's round trip), then
// from there to Await's return (wake-p50_ms, wake-p99_ms: the
// notification's way to the listener, and the waiter's read).
func reportAwait(b *testing.B, runs []awaitRun, notified []notifySent) {
	slices.SortFunc(notified, func(x, y notifySent) int { return x.sent.Compare(y.sent) })
	var fromReturn, fromAck, toNotify, toWake []float64
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	before := 0
	for _, r := range runs {
		if r.beforeCommit {
			before++
			continue
		}
		fromReturn = append(fromReturn, ms(r.awaited.Sub(r.returned)))
		if r.acked.IsZero() {
			continue
		}
		fromAck = append(fromAck, ms(r.awaited.Sub(r.acked)))
		i, _ := slices.BinarySearchFunc(notified, r.acked, func(n notifySent, t time.Time) int { return n.sent.Compare(t) })
		if i < len(notified) && !notified[i].answered.After(r.awaited) {
			toNotify = append(toNotify, ms(notified[i].answered.Sub(r.acked)))
			toWake = append(toWake, ms(r.awaited.Sub(notified[i].answered)))
		}
	}
	b.ReportMetric(float64(before), "before-commit")
	report := func(vs []float64, name string, ps ...int) {
		if len(vs) == 0 {
			return
		}
		slices.Sort(vs)
		for _, p := range ps {
			b.ReportMetric(vs[min(len(vs)-1, len(vs)*p/100)], fmt.Sprintf("%sp%d_ms", name, p))
		}
	}
	report(fromReturn, "", 50, 99)
	if len(fromReturn) > 0 {
		b.ReportMetric(fromReturn[len(fromReturn)-1], "max_ms")
	}
	report(fromAck, "ack-", 50, 99)
	report(toNotify, "notify-", 50, 99)
	report(toWake, "wake-", 50, 99)
	if before > 0 {
		b.Errorf("%d of %d Awaits returned before the deciding function's commit (the order row was not visible)", before, len(runs))
	}
}

var _ pgx.QueryTracer = (*commitTracer)(nil)
