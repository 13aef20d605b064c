package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// BenchmarkFloor runs our handler on pgstore beside a hand-written receiver
// with the same guarantee, in each mode, on one throwaway server of its own
// with production durability (fsync, full_page_writes and synchronous_commit
// on), under the load of storetest.FloorRun (16 senders, 3 replicas, two
// thirds of the deliveries duplicates; see BENCHMARKS.md):
//
//   - pg-default: at-least-once. Ours: pgstore with a function that does
//     nothing; ours-nomemory: the same, remembering no event
//     (storetest.NoRecentlyDone()). Baseline: SELECT done; INSERT the claim
//     with a lease ON CONFLICT (taking over a lapsed one); process; UPDATE
//     done.
//
// Besides storetest.FloorRun's metrics, each run reports per delivery the
// statements the receiver sent and the round trips they took (counted by a
// pgx tracer, BEGIN and COMMIT included; a batch is one round trip), the transactions that wrote (each a durable commit: the
// transaction ids the server assigned), WAL bytes (pg_current_wal_lsn), WAL
// syncs (pg_stat_wal: fsyncs, of commits and of background writes), the server's
// CPU (its processes' threads' /proc schedstat: storetest.ProcessesCPU), and the share of HOT updates on the
// receiver's table (pg_stat_user_tables). Under -v it prints the ratios;
// PAYMENTS_FLOOR_ROUNDS=n runs n interleaved rounds.
func BenchmarkFloor(b *testing.B) {
	srv := testservers.StartPostgres(b)
	statements := configureFloorServer(b, srv)
	admin := newPool(b, srv.URL(), 2)
	if statements {
		if _, err := admin.Exec(testCtx(b), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			b.Fatal(err)
		}
	}
	breakdowns := map[string]string{}
	table := &storetest.FloorTable{}
	sides := []struct {
		mode, side string
		build      func(b *testing.B, r *pgFloorRun) http.Handler
	}{
		{"pg-default", "ours", oursDefault()},
		{"pg-default", storetest.FloorBaseline, baselineDefault},
		{"pg-default", "ours-nomemory", oursDefault(storetest.NoRecentlyDone())},
	}
	for round := range storetest.FloorRounds(b) {
		for _, s := range storetest.FloorOrder(round, sides) {
			b.Run(s.mode+"/"+s.side, func(b *testing.B) {
				r := newPGFloorRun(b, srv.URL(), admin)
				handlers := make([]http.Handler, storetest.FloorReplicas)
				for i := range handlers {
					r.replica = i
					handlers[i] = s.build(b, r)
				}
				r.statements = statements
				table.Report(b, r.measure(b, s.mode+"/"+s.side, handlers))
				breakdowns[s.mode+"/"+s.side] = r.breakdown
			})
		}
	}
	table.PrintIfVerbose()
	if testing.Verbose() {
		for _, s := range sides {
			fmt.Print(breakdowns[s.mode+"/"+s.side])
		}
	}
}

// configureFloorServer gives the server production durability (fsync and
// full_page_writes on; synchronous_commit is on already), leaves
// checkpoints to the benchmark (measure) and, when the
// module is installed, pg_stat_statements, then restarts it. It says
// whether pg_stat_statements is loaded.
func configureFloorServer(b *testing.B, srv *testservers.Postgres) bool {
	setup := newPool(b, srv.URL(), 1)
	ctx := testCtx(b)
	// No checkpoint of the server's own inside a run: each run starts
	// right after one (measure), so that every side pays for the same full
	// page images, and none for a checkpoint that fell in its run.
	settings := []string{"ALTER SYSTEM SET fsync = on", "ALTER SYSTEM SET full_page_writes = on",
		"ALTER SYSTEM SET checkpoint_timeout = '1h'", "ALTER SYSTEM SET max_wal_size = '8GB'"}
	var libdir string
	if err := setup.QueryRow(ctx, "SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'").Scan(&libdir); err != nil {
		b.Fatal(err)
	}
	_, err := os.Stat(filepath.Join(libdir, "pg_stat_statements.so"))
	statements := err == nil
	if statements {
		settings = append(settings, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
	} else {
		b.Logf("pg_stat_statements is not installed (%v): no breakdown by statement", err)
	}
	for _, q := range settings {
		if _, err := setup.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	setup.Close()
	srv.Stop(b)
	srv.Start(b)
	return statements
}

// pgFloorRun is one run of one side: its replicas' pools, the tables it
// made, and the counters.
type pgFloorRun struct {
	url     string
	admin   *pgxpool.Pool
	app     string // application_name of the replicas' connections
	pools   []*pgxpool.Pool
	calls   pgCalls
	once    storetest.FloorOnce
	plan    *storetest.FloorPlan
	replica int

	table string // the receiver's own table, whose HOT ratio is measured
	paid  string // the merchant's table (pg-tx)

	statements bool   // pg_stat_statements is loaded
	breakdown  string // its figures for the run, printed under -v
	maxConns   int32  // of each replica's pool (default storetest.FloorSenders)
}

func newPGFloorRun(b *testing.B, url string, admin *pgxpool.Pool) *pgFloorRun {
	return &pgFloorRun{url: url, admin: admin, app: uniqueName("floor_"), plan: storetest.NewFloorPlan(b, b.N)}
}

// pool is the pool of the replica being built.
func (r *pgFloorRun) pool(b *testing.B) *pgxpool.Pool {
	if r.replica < len(r.pools) {
		return r.pools[r.replica]
	}
	p := r.newPool(b)
	r.pools = append(r.pools, p)
	return p
}

// newPool opens a pool like the replicas': their size, application name and
// counting tracer; it is closed when the benchmark ends.
func (r *pgFloorRun) newPool(b *testing.B) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(r.url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = storetest.FloorSenders
	if r.maxConns > 0 {
		cfg.MaxConns = r.maxConns
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = r.app
	cfg.ConnConfig.Tracer = (*countingTracer)(&r.calls)
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

// pgCalls counts what a pool sends: statements (each of a batch's too) and
// round trips (a statement alone, or a batch).
type pgCalls struct{ stmts, trips atomic.Int64 }

// countingTracer counts a pool's statements and round trips.
type countingTracer pgCalls

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.stmts.Add(1)
	c.trips.Add(1)
	return ctx
}

func (*countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *countingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.trips.Add(1)
	return ctx
}

func (c *countingTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.stmts.Add(1)
}

func (*countingTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// pgCounters are the server's cumulative counters.
type pgCounters struct {
	xids, walBytes, walSyncs, upd, hotUpd int64
}

func (r *pgFloorRun) counters(b *testing.B) pgCounters {
	var c pgCounters
	err := r.admin.QueryRow(testCtx(b), `SELECT
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
    pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
    (SELECT wal_sync FROM pg_stat_wal),
    COALESCE((SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = to_regclass($1)), 0),
    COALESCE((SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = to_regclass($1)), 0)`, r.table).
		Scan(&c.xids, &c.walBytes, &c.walSyncs, &c.upd, &c.hotUpd)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// serverCPU reads the CPU of the server's processes: every backend and
// background process pg_stat_activity lists.
func (r *pgFloorRun) serverCPU(b *testing.B) (map[int]time.Duration, bool) {
	rows, err := r.admin.Query(testCtx(b), "SELECT pid FROM pg_stat_activity")
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		b.Fatal(err)
	}
	return storetest.ProcessesCPU(pids)
}

// measure opens every connection of the replicas, runs the plan, checks that
// each event was processed once, and returns the metrics. The counters are
// read once the replicas' connections ended, since a backend reports its
// statistics when it exits (or, idle, at most every second).
func (r *pgFloorRun) measure(b *testing.B, name string, handlers []http.Handler) storetest.FloorMetrics {
	ctx := testCtx(b)
	for _, p := range r.pools {
		conns := make([]*pgxpool.Conn, 0, storetest.FloorSenders)
		for range storetest.FloorSenders {
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

	m := storetest.FloorRun(b, r.plan, handlers)

	cpu1, cpuOK1 := r.serverCPU(b)
	stmts, trips := r.calls.stmts.Load(), r.calls.trips.Load()
	for _, p := range r.pools {
		p.Close()
	}
	r.waitGone(b)
	after := r.counters(b)
	if r.statements {
		r.breakdown = r.byStatement(b, name)
	}
	n := float64(b.N)
	m["stmts/delivery"] = float64(stmts) / n
	m["round-trips/delivery"] = float64(trips) / n
	m["write-xacts/delivery"] = float64(after.xids-before.xids) / n
	m["wal-bytes/delivery"] = float64(after.walBytes-before.walBytes) / n
	m["wal-syncs/delivery"] = float64(after.walSyncs-before.walSyncs) / n
	if cpuOK && cpuOK1 {
		m["db-cpu-us/delivery"] = float64(storetest.CPUDelta(cpu0, cpu1)) / float64(time.Microsecond) / n
	}
	if upd := after.upd - before.upd; upd > 0 {
		m["hot-%"] = 100 * float64(after.hotUpd-before.hotUpd) / float64(upd)
	}
	if r.paid != "" {
		if got := rowsOf(b, r.admin, r.paid, ""); got != r.plan.Events() {
			b.Fatalf("the merchant's table has %d rows for %d events", got, r.plan.Events())
		}
	}
	r.once.Check(b, r.plan)
	return m
}

// waitGone waits until the replicas' backends have exited.
func (r *pgFloorRun) waitGone(b *testing.B) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := r.admin.QueryRow(testCtx(b), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", r.app).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d connections of the replicas are still open after 30s", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// oursDefault is a replica of our handler on pgstore, as a merchant sets it
// up: default options, a function that does nothing (but count).
func oursDefault(opts ...webhook.HandlerOption) func(b *testing.B, r *pgFloorRun) http.Handler {
	return func(b *testing.B, r *pgFloorRun) http.Handler {
		s := r.oursStore(b)
		return webhook.NewHandler(storetest.Verifier(b), func(_ context.Context, ev *payments.Event) error {
			r.once.Add(ev.ID)
			return nil
		}, append([]webhook.HandlerOption{webhook.WithClaimStore(s)}, opts...)...)
	}
}

// oursStore is a store of the replica being built, on the run's table.
func (r *pgFloorRun) oursStore(b *testing.B) *pgstore.ClaimStore {
	first := r.table == ""
	if first {
		r.table = uniqueName("events_")
		dropOnCleanup(b, r.admin, r.table)
	}
	s, err := pgstore.NewClaimStore(r.pool(b), pgstore.WithTable(r.table))
	if err != nil {
		b.Fatal(err)
	}
	if first {
		if err := s.Migrate(testCtx(b)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// byStatement is a Markdown table of the run's statements, the most WAL
// first, from pg_stat_statements (the benchmark's own queries of pg_stat_*
// views left out).
func (r *pgFloorRun) byStatement(b *testing.B, name string) string {
	rows, err := r.admin.Query(testCtx(b), `SELECT calls, wal_records, wal_bytes::bigint, total_exec_time + total_plan_time, query
FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_total_relation_size%'
ORDER BY wal_bytes DESC, calls DESC`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	names := []string{r.table, "<table>"}
	if r.paid != "" {
		names = append(names, r.paid, "<merchant>")
	}
	short := strings.NewReplacer(names...)
	var out strings.Builder
	fmt.Fprintf(&out, "\n%s, by statement (pg_stat_statements, the last run: %d deliveries of %d events)\n\n", name, b.N, r.plan.Events())
	out.WriteString("| calls/delivery | WAL records/call | WAL bytes/call | µs/call | statement |\n|---:|---:|---:|---:|---|\n")
	for rows.Next() {
		var calls, records, bytes int64
		var ms float64
		var query string
		if err := rows.Scan(&calls, &records, &bytes, &ms, &query); err != nil {
			b.Fatal(err)
		}
		query = strings.Join(strings.Fields(query), " ")
		query = short.Replace(query)
		if len(query) > 90 {
			query = query[:90] + "…"
		}
		fmt.Fprintf(&out, "| %.3f | %.2f | %.0f | %.1f | `%s` |\n", float64(calls)/float64(b.N), float64(records)/float64(calls), float64(bytes)/float64(calls), 1000*ms/float64(calls), query)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out.String()
}
