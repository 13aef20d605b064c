package pgstore_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// purgeStep is how many rows expire before each timed Purge.
const purgeStep = 10_000

// BenchmarkPurge measures Purge on a table of PAYMENTS_PURGE_ROWS completed
// events (default 1,000,000; try 10,000,000) claimed over the last 6 days
// and kept for 7, every other one in the narrow form Transactional writes: before each iteration (untimed) the retention of the
// 10,000 oldest rows left ends, and the iteration is the Purge that deletes
// them (10 statements of PurgeBatch rows). ns/10k-rows is the time per
// 10,000 expired rows (ns/op too, unless so many iterations were asked
// that each purges fewer rows).
//
//	go test -run '^$' -bench BenchmarkPurge -benchtime 10x ./eventstore/pgstore/
//	PAYMENTS_PURGE_ROWS=10000000 go test -run '^$' -bench BenchmarkPurge -benchtime 10x -timeout 60m ./eventstore/pgstore/
func BenchmarkPurge(b *testing.B) {
	rows := 1_000_000
	if v := os.Getenv("PAYMENTS_PURGE_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("PAYMENTS_PURGE_ROWS=%q: want a positive number", v)
		}
		rows = n
	}
	srv := testservers.StartPostgres(b)
	pool := newPool(b, srv.URL(), 2)
	s, table := newStore(b, pool, pgstore.WithPurgeEvery(0))
	// Filling 10M rows takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// Row i was claimed (6 days / rows) * i after 6 days ago and done at
	// once: none has reached the end of its 7 days yet. Odd rows are
	// narrow (state, token and expires_at NULL), as Transactional writes
	// them; even rows are spelled out, as the default mode's completions.
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (event_id, state, token, expires_at, claimed_at)
SELECT 'evt_' || i, CASE WHEN i % 2 = 0 THEN 'done' END, CASE WHEN i % 2 = 0 THEN 't' END,
    CASE WHEN i % 2 = 0 THEN c + interval '7 days' END, c
FROM generate_series(1, $1::int) AS i, LATERAL (SELECT now() - interval '6 days' + (i::float8 / $1) * interval '6 days' AS c) AS t`, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	// Never more than half the table in all: with many iterations (CI's
	// -benchtime=100x) each purges fewer rows, and the time is still
	// reported per 10,000 rows.
	step := min(purgeStep, rows/2/b.N)
	if step < 1 {
		b.Fatalf("%d iterations on a table of %d rows: set PAYMENTS_PURGE_ROWS higher", b.N, rows)
	}
	var deleted int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		// The next purgeStep rows in claim order reach the end of their
		// retention, as if five days had passed for them: they are the
		// oldest claims, and the only ones a retention old (a narrow row
		// expires a retention after its claim).
		if _, err := pool.Exec(ctx, "UPDATE "+table+` SET claimed_at = claimed_at - interval '5 days',
    expires_at = CASE WHEN expires_at IS NOT NULL THEN now() - interval '1 second' END
WHERE event_id = ANY(SELECT 'evt_' || g FROM generate_series($1::int, $2::int) AS g)`, i*step+1, (i+1)*step); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := s.Purge(ctx)
		if err != nil {
			b.Fatal(err)
		}
		deleted += n
	}
	b.StopTimer()
	if deleted != int64(b.N*step) {
		b.Fatalf("purged %d rows, want %d", deleted, b.N*step)
	}
	b.ReportMetric(float64(rows), "table_rows")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*purgeStep/float64(step), "ns/10k-rows")
}
