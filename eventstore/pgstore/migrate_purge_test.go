package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// envPurgeBench makes TestPurgeScale measure tables of 1M and 10M rows
// (which take minutes to fill) instead of one of 100,000.
const envPurgeBench = "PAYMENTS_PURGE_BENCH"

// purgeRounds is how many batches of 10,000 expired rows each size purges.
const (
	purgeRounds  = 3
	purgeExpired = 10_000
)

// TestPurgeScale measures Purge on a big table: the time it takes to delete
// 10,000 expired rows from a table of 100,000 rows (1M and 10M with
// PAYMENTS_PURGE_BENCH=1), logged as the median of purgeRounds rounds, for
// BENCHMARKS.md. It asserts no timing, only that each Purge deletes exactly
// the expired rows.
//
// The table is filled from a completion the store itself wrote, copied with
// generate_series (event ids in order, every timestamptz column shifted by
// a microsecond per row), and rows expire by moving every timestamptz column
// back past the retention, 10,000 of the oldest at a time, as time passing
// would: so it holds whatever the schema is, as long as the key is event_id.
func TestPurgeScale(t *testing.T) {
	sizes := []int{100_000}
	if os.Getenv(envPurgeBench) == "1" {
		sizes = []int{1_000_000, 10_000_000}
	}
	pool := newPool(t, testservers.SharedPostgres(t).URL(), 2)
	for _, rows := range sizes {
		t.Run(fmt.Sprintf("rows=%d", rows), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+rows/100_000)*time.Minute)
			defer cancel()
			s, table := newStore(t, pool, pgstore.WithPurgeEvery(0))
			c, err := s.Claim(ctx, "template")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Complete(ctx, c); err != nil {
				t.Fatal(err)
			}
			fill, expire := purgeSQL(t, pool, table)
			start := time.Now()
			if _, err := pool.Exec(ctx, fill, rows); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"DELETE FROM " + table + " WHERE event_id = 'template'", "VACUUM ANALYZE " + table} {
				if _, err := pool.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("filled %d rows in %v", rows, time.Since(start).Round(time.Millisecond))
			var took []time.Duration
			for round := range purgeRounds {
				lo := round*purgeExpired + 1
				tag, err := pool.Exec(ctx, expire, purgeID(lo), purgeID(lo+purgeExpired-1))
				if err != nil || tag.RowsAffected() != purgeExpired {
					t.Fatalf("expiring rows %d..: %v rows, %v", lo, tag.RowsAffected(), err)
				}
				start := time.Now()
				n, err := s.Purge(ctx)
				took = append(took, time.Since(start))
				if err != nil || n != purgeExpired {
					t.Fatalf("Purge deleted %d rows (%v), want %d", n, err, purgeExpired)
				}
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			var size string
			if err := pool.QueryRow(ctx, "SELECT pg_size_pretty(pg_total_relation_size($1))", table).Scan(&size); err != nil {
				t.Fatal(err)
			}
			t.Logf("PURGE rows=%d size=%s: %v per %d expired rows (median of %d; all %v)",
				rows, size, took[len(took)/2].Round(10*time.Microsecond), purgeExpired, purgeRounds, took)
		})
	}
}

// purgeID is the event id of the i-th generated row: in the order of i.
func purgeID(i int) string { return fmt.Sprintf("ev-%09d", i) }

// purgeSQL builds the statements that fill table with copies of its row
// 'template' ($1: how many) and expire a range of them ($1, $2: the first
// and last event id), from the table's columns.
func purgeSQL(t *testing.T, pool *pgxpool.Pool, table string) (fill, expire string) {
	rows, err := pool.Query(testCtx(t), `SELECT column_name, data_type, COALESCE(column_default, ''), is_identity, is_generated
FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols, exprs, shifts []string
	for rows.Next() {
		var name, typ, def, identity, generated string
		if err := rows.Scan(&name, &typ, &def, &identity, &generated); err != nil {
			t.Fatal(err)
		}
		if identity == "YES" || generated != "NEVER" || strings.HasPrefix(def, "nextval(") {
			continue
		}
		col := pgx.Identifier{name}.Sanitize()
		cols = append(cols, col)
		switch {
		case name == "event_id":
			exprs = append(exprs, "'ev-' || lpad(g::text, 9, '0')")
		case typ == "timestamp with time zone":
			exprs = append(exprs, "tpl."+col+" + g * interval '1 microsecond'")
			shifts = append(shifts, col+" = "+col+" - interval '1 day' - "+retentionInterval)
		default:
			exprs = append(exprs, "tpl."+col)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(shifts) == 0 {
		t.Fatalf("table %s has no timestamptz column to expire", table)
	}
	fill = "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(exprs, ", ") +
		" FROM " + table + " AS tpl, generate_series(1, $1::int) AS g WHERE tpl.event_id = 'template'"
	expire = "UPDATE " + table + " SET " + strings.Join(shifts, ", ") + " WHERE event_id BETWEEN $1 AND $2"
	return fill, expire
}

// retentionInterval is the store's default retention in SQL.
var retentionInterval = fmt.Sprintf("interval '%d seconds'", int64(pgstore.DefaultRetention/time.Second))
