package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// queueSenders is how many deliveries BenchmarkQueue keeps in flight: the
// issue's 32 senders over three receivers.
const queueSenders = 32

// envQueueSlow, set to a duration (the "6s"), makes BenchmarkQueue
// also run every side with a function that takes that long. Unset, only
// the instant function runs: CI's -benchtime=100x of a 6 s function would
// take minutes.
const envQueueSlow = "PAYMENTS_QUEUE_BENCH_SLOW"

// envQueueAnswers, set (to anything), makes each run of BenchmarkQueue end
// once its deliveries are answered: its workers are stopped and their
// functions cancelled, and it reports the answer's metrics alone. So the
// answer of a 6 s function can be compared over many rounds in minutes
// (a round is one burst of about a quarter of a second, whose p99 is its
// 12 slowest answers). A second floor, floor-again, runs too: its answer
// over the floor's shows how far two runs of one side differ.
const envQueueAnswers = "PAYMENTS_QUEUE_BENCH_ANSWERS"

// oursKind is the kind of a Queue's event jobs.
var oursKind = pgstore.EventArgs{}.Kind()

// BenchmarkQueue runs pgstore.Queue beside a hand-written River receiver
// with the same guarantee and a floor that only verifies and INSERTs, in
// turn on one throwaway server of its own with production durability
// (configureFloorServer): FloorReplicas replicas, each a pool and (but the
// floor) a River client with pgstore.DefaultWorkers workers, queueSenders
// senders, the deliveries of storetest.FloorRun (two thirds duplicates).
// Sides, per mode (queue-instant: a function that only counts; queue-<d>
// with envQueueSlow: one that sleeps d first), alternating within each
// round (storetest.FloorOrder):
//
//   - ours: the recommended path, webhook.NewQueueHandler(verifier,
//     q.Enqueue) on a Queue with default options, started in the same
//     process (examples/pg-queue);
//   - baseline: verify; in one transaction INSERT the id and body into a
//     table of its own ON CONFLICT DO NOTHING and, only if new, InsertTx
//     of a job whose args are the id; 200; a worker that reads the body,
//     runs the function, river.JobCompleteTx, clears the body and commits
//     (queue_bench_baseline_test.go);
//   - floor: verify, INSERT the id and body … ON CONFLICT DO NOTHING, 200;
//     nothing runs.
//
// A run lasts until every event's job is completed (the floor: until every
// delivery was answered) and checks that each event was processed exactly
// once. Besides FloorRun's metrics per delivery it reports per event:
// events/s (events over the time from the first delivery to the last
// completion), the server's CPU, WAL bytes, transactions that wrote, and the
// round trips of the replicas' pools (River's own included); and per run,
// the jobs River inserted and took while the deliveries were answered
// (jobs-inserted-while-answering, jobs-taken-while-answering). Under -v it
// prints the ratios to the baseline, the answer over the floor's, and each
// side's statements.
func BenchmarkQueue(b *testing.B) {
	type mode struct {
		name string
		slow time.Duration
	}
	modes := []mode{{"queue-instant", 0}}
	if v := os.Getenv(envQueueSlow); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration such as 6s", envQueueSlow, v)
		}
		modes = append(modes, mode{"queue-" + v, d})
	}
	srv := testservers.StartPostgres(b)
	statements := configureFloorServer(b, srv)
	admin := newPool(b, srv.URL(), 4)
	if statements {
		if _, err := admin.Exec(testCtx(b), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			b.Fatal(err)
		}
	}
	sides := []queueSide{
		{"ours", oursQueue},
		{storetest.FloorBaseline, baselineRiver},
		{"floor", floorInsert},
	}
	answers := os.Getenv(envQueueAnswers) != ""
	if answers {
		sides = append(sides, queueSide{"floor-again", floorInsert})
	}
	table := &storetest.FloorTable{}
	breakdowns := map[string]string{}
	for round := range storetest.FloorRounds(b) {
		for _, m := range modes {
			for _, s := range storetest.FloorOrder(round, sides) {
				name := m.name + "/" + s.name
				b.Run(name, func(b *testing.B) {
					r := newQueueRun(b, srv.URL(), admin, m.slow)
					r.statements, r.answers = statements, answers
					handlers := make([]http.Handler, storetest.FloorReplicas)
					for i := range handlers {
						r.replica = i
						handlers[i] = s.build(b, r)
					}
					table.Report(b, r.measure(b, name, handlers))
					breakdowns[name] = r.breakdown
				})
			}
		}
	}
	if !testing.Verbose() {
		return
	}
	table.Print(os.Stdout)
	for _, m := range modes {
		for _, side := range []string{"ours", storetest.FloorBaseline, "floor-again"} {
			p50, ok1 := table.Ratio(b.Name()+"/"+m.name+"/"+side, b.Name()+"/"+m.name+"/floor", "p50-us")
			p99, ok2 := table.Ratio(b.Name()+"/"+m.name+"/"+side, b.Name()+"/"+m.name+"/floor", "p99-us")
			if ok1 && ok2 {
				fmt.Printf("\n%s: the answer of %s over the floor's: p50 %.2fx, p99 %.2fx\n", m.name, side, p50, p99)
			}
		}
		for _, s := range sides {
			fmt.Print(breakdowns[m.name+"/"+s.name])
		}
	}
}

// queueSide is a side of BenchmarkQueue: build makes a replica's handler.
type queueSide struct {
	name  string
	build func(b *testing.B, r *queueRun) http.Handler
}

// queueRun is one run of one side of BenchmarkQueue.
type queueRun struct {
	*pgFloorRun
	fn      pgstore.TxEventFunc // the merchant's function
	schema  string              // River's schema ("" for the floor)
	kind    string              // the kind of the event jobs
	ours    *testQueue          // ours: the Queue the replicas share tables with
	answers bool                // envQueueAnswers: end once the deliveries are answered
	starts  []func(context.Context) error
	stops   []func(context.Context) error
	lister  *river.Client[pgx.Tx] // insert-only: River's API on the run's jobs
}

func newQueueRun(b *testing.B, url string, admin *pgxpool.Pool, slow time.Duration) *queueRun {
	r := &queueRun{pgFloorRun: newPGFloorRun(b, url, admin)}
	// Each replica's pool: its share of the senders, its workers (each
	// holds a connection while the function runs) and River's own.
	r.maxConns = queueSenders/storetest.FloorReplicas + 1 + pgstore.DefaultWorkers + 4
	r.fn = func(ctx context.Context, _ pgx.Tx, ev *payments.Event) error {
		if slow > 0 {
			select {
			case <-time.After(slow):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		r.once.Add(ev.ID)
		return nil
	}
	return r
}

// oursQueue is a replica of ours: a Queue with default options on the
// replica's pool, its Enqueue behind webhook.NewQueueHandler with default
// options, and its River client started for the run.
func oursQueue(b *testing.B, r *queueRun) http.Handler {
	pool := r.pool(b)
	if r.ours == nil {
		r.ours = newQueue(b, r.admin, r.fn, nil)
		r.schema, r.table, r.kind = r.ours.schema, r.ours.table, oursKind
	}
	q := r.ours.replica(b, pool, r.fn)
	r.starts = append(r.starts, q.Start)
	r.stops = append(r.stops, q.Stop)
	return webhook.NewQueueHandler(storetest.Verifier(b), q.Enqueue)
}

// measure opens the replicas' connections, starts their workers, runs the
// plan, waits until every event's job is completed, and returns the
// metrics: FloorRun's per delivery, the server's per event.
func (r *queueRun) measure(b *testing.B, name string, handlers []http.Handler) storetest.FloorMetrics {
	ctx := testCtx(b)
	for _, p := range r.pools {
		conns := make([]*pgxpool.Conn, 0, r.maxConns)
		for range r.maxConns {
			c, err := p.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Release()
		}
	}
	r.warm(b, handlers)
	for _, start := range r.starts {
		if err := start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range r.stops {
			_ = s(sctx)
		}
	}
	defer stop()
	if r.kind == oursKind {
		r.waitPurged(b) // the Queue's periodic purge runs at start: not in the run
	}
	if _, err := r.admin.Exec(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	before := r.counters(b)
	cpu0, cpuOK := r.serverCPU(b)
	r.calls.stmts.Store(0)
	r.calls.trips.Store(0)
	if r.statements {
		if _, err := r.admin.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			b.Fatal(err)
		}
	}

	m, start := storetest.FloorRunSenders(b, r.plan, handlers, queueSenders)
	answered := start.Add(time.Duration(float64(b.N) / m["deliveries/s"] * float64(time.Second)))
	if r.answers {
		stop()
		if r.kind != "" {
			r.jobsWhileAnswering(b, m, answered)
		}
		return m
	}
	if r.kind != "" {
		r.waitProcessed(b)
	}
	done := time.Now()

	cpu1, cpuOK1 := r.serverCPU(b)
	trips := r.calls.trips.Load()
	stop()
	for _, p := range r.pools {
		p.Close()
	}
	r.waitGone(b)
	after := r.counters(b)
	if r.statements {
		r.breakdown = r.byStatement(b, name)
	}
	events := float64(r.plan.Events())
	if r.kind != "" {
		m["events/s"] = events / done.Sub(start).Seconds()
		r.once.Check(b, r.plan)
		r.jobsWhileAnswering(b, m, answered)
	} else if got := rowsOf(b, r.admin, r.table, ""); got != r.plan.Events() {
		b.Fatalf("the floor's table has %d rows for %d events", got, r.plan.Events())
	}
	m["round-trips/event"] = float64(trips) / events
	m["write-xacts/event"] = float64(after.xids-before.xids) / events
	m["wal-bytes/event"] = float64(after.walBytes-before.walBytes) / events
	if cpuOK && cpuOK1 {
		m["db-cpu-us/event"] = float64(storetest.CPUDelta(cpu0, cpu1)) / float64(time.Microsecond) / events
	}
	return m
}

// jobsWhileAnswering adds to m River's work while the deliveries were
// answered (until answered): the jobs inserted and taken by a worker by
// then, as River's JobList shows them.
func (r *queueRun) jobsWhileAnswering(b *testing.B, m storetest.FloorMetrics, answered time.Time) {
	var inserted, taken float64
	for _, j := range r.jobs(b, nil) {
		if !j.CreatedAt.After(answered) {
			inserted++
		}
		if j.AttemptedAt != nil && !j.AttemptedAt.After(answered) {
			taken++
		}
	}
	m["jobs-inserted-while-answering"], m["jobs-taken-while-answering"] = inserted, taken
}

// jobs lists the run's event jobs through River's API (in states, or all),
// without the Queue's purge.
func (r *queueRun) jobs(b *testing.B, states []rivertype.JobState) []*rivertype.JobRow {
	if r.lister == nil {
		c, err := river.NewClient(riverpgxv5.New(r.admin), &river.Config{Schema: r.schema})
		if err != nil {
			b.Fatal(err)
		}
		r.lister = c
	}
	params := river.NewJobListParams().Kinds(r.kind).First(10000)
	if len(states) > 0 {
		params = params.States(states...)
	}
	var all []*rivertype.JobRow
	for {
		res, err := r.lister.JobList(testCtx(b), params)
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range res.Jobs {
			if !strings.Contains(string(j.EncodedArgs), `"purge"`) {
				all = append(all, j)
			}
		}
		if len(res.Jobs) < 10000 {
			return all
		}
		params = params.After(res.LastCursor)
	}
}

// warm delivers a plan of its own through handlers before the run and its
// workers start, from as many senders as the replicas have connections,
// and then deletes its events: so every connection has run the side's
// statements once, as a running receiver's have. A connection's first
// statement costs far more than the next (pgx prepares it, the server
// loads the tables' and indexes' catalog entries into that backend): cold,
// the run's first 32 concurrent answers, one per connection, were its
// slowest and made its p99 (ours' statement, with its subquery and three
// indexes, paid 30-50 ms against the floor's 20).
func (r *queueRun) warm(b *testing.B, handlers []http.Handler) {
	senders := int(r.maxConns) * len(r.pools)
	plan := storetest.NewFloorPlan(b, 2*senders)
	storetest.FloorRunSenders(b, plan, handlers, senders)
	if r.kind != "" {
		// The warm-up's jobs, before any worker started (River's API).
		res, err := r.lister0(b).JobDeleteMany(testCtx(b), river.NewJobDeleteManyParams().Kinds(r.kind).First(10000))
		if err != nil {
			b.Fatal(err)
		}
		if n := len(res.Jobs); n != plan.Events() {
			b.Fatalf("the warm-up left %d of its %d jobs behind: the run would process them", plan.Events()-n, plan.Events())
		}
	}
	tag, err := r.admin.Exec(testCtx(b), "DELETE FROM "+r.table+" WHERE event_id = ANY($1)", plan.IDs)
	if err != nil {
		b.Fatal(err)
	}
	if n := int(tag.RowsAffected()); n != plan.Events() {
		b.Fatalf("the warm-up left %d of its %d events behind: the run would process them", plan.Events()-n, plan.Events())
	}
}

// lister0 is the run's insert-only River client, for River's API.
func (r *queueRun) lister0(b *testing.B) *river.Client[pgx.Tx] {
	r.jobs(b, []rivertype.JobState{rivertype.JobStateCompleted})
	return r.lister
}

// waitProcessed waits until every event was processed and its job
// completed: the function counts first (no query while it runs), then the
// jobs' table is read until the last commits are in.
func (r *queueRun) waitProcessed(b *testing.B) {
	events := r.plan.Events()
	for limit := time.Now().Add(30 * time.Minute); r.once.Count() < events; time.Sleep(time.Millisecond) {
		if time.Now().After(limit) {
			b.Fatalf("%d of %d events processed after 30 minutes", r.once.Count(), events)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; {
		n := len(r.jobs(b, []rivertype.JobState{rivertype.JobStateCompleted}))
		if n == events {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d jobs completed a minute after every function ran", n, events)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPurged waits for the purge that a started Queue runs at once.
func (r *queueRun) waitPurged(b *testing.B) {
	params := river.NewJobListParams().Kinds(oursKind).States(rivertype.JobStateCompleted).First(10000)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.jobs(b, nil) // makes the lister
		res, err := r.lister.JobList(testCtx(b), params)
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range res.Jobs {
			if strings.Contains(string(j.EncodedArgs), `"purge"`) {
				return
			}
		}
	}
	b.Log("the Queue's first purge did not run within 30s: it may fall in the run")
}
