package pgstore_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// walCount is what the WAL between two marks holds for the store's table:
// records read from the WAL itself (pg_walinspect), so other sessions'
// work does not count.
type walCount struct {
	records    int // touching the table or its indexes, but prunes
	prunes     int // a reader's pruning of a page's dead HOT versions
	commits    int // of transactions that touched them
	updates    int // row updates of the table
	hotUpdates int // of which HOT
	kinds      string
}

// walServer starts a server of its own for a WAL test (no other test's
// records in its WAL) and returns a pool on it and a merchant's table.
func walServer(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool := newPool(t, testservers.StartPostgres(t).URL(), 8)
	if _, err := pool.Exec(testCtx(t), "CREATE EXTENSION IF NOT EXISTS pg_walinspect; CREATE TABLE wal_flush (x int)"); err != nil {
		t.Fatal(err)
	}
	return pool, merchantTable(t, pool)
}

// walMark is the WAL position the next walSince counts from.
func walMark(tb testing.TB, admin *pgxpool.Pool) string {
	tb.Helper()
	var lsn string
	if err := admin.QueryRow(testCtx(tb), "SELECT pg_current_wal_flush_lsn()::text").Scan(&lsn); err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// walSince counts the records about table written since mark.
func walSince(tb testing.TB, admin *pgxpool.Pool, table, mark string) walCount {
	tb.Helper()
	// A commit of another table flushes every record written before it
	// (and gives the WAL an end past the mark).
	if _, err := admin.Exec(testCtx(tb), "INSERT INTO wal_flush VALUES (1)"); err != nil {
		tb.Fatal(err)
	}
	var c walCount
	err := admin.QueryRow(testCtx(tb), `
WITH files AS (
    SELECT pg_relation_filenode(c.oid)::text AS node FROM pg_class c
    WHERE c.oid = $1::regclass OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass)
), recs AS (
    SELECT * FROM pg_get_wal_records_info($2::pg_lsn, pg_current_wal_flush_lsn())
), ours AS (
    SELECT r.* FROM recs r WHERE EXISTS (SELECT 1 FROM files f WHERE r.block_ref LIKE '%/' || f.node || ' %')
)
SELECT (SELECT count(*) FROM ours WHERE record_type <> 'PRUNE'),
       (SELECT count(*) FROM ours WHERE resource_manager = 'Heap2' AND record_type = 'PRUNE'),
       (SELECT count(*) FROM recs WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%'
            AND xid IN (SELECT xid FROM ours WHERE xid <> '0')),
       (SELECT count(*) FROM ours WHERE resource_manager = 'Heap' AND record_type IN ('UPDATE', 'HOT_UPDATE')),
       (SELECT count(*) FROM ours WHERE resource_manager = 'Heap' AND record_type = 'HOT_UPDATE'),
       (SELECT coalesce(string_agg(resource_manager || '/' || record_type, ' '), '') FROM ours)`,
		table, mark).Scan(&c.records, &c.prunes, &c.commits, &c.updates, &c.hotUpdates, &c.kinds)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// What a delivery costs in the WAL, read from the WAL itself, on a server
// of its own (the default mode and the Queue):
//
//   - a duplicate of a done event writes nothing about the table and
//     commits nothing (it used to lock the row: a record and a flush each);
//   - a completion in the default mode is a HOT update (the index is on
//     claimed_at, which it does not change);
//   - with the Queue, a first delivery is one commit (its id, body and
//     job) and updates nothing (no job id kept), and a duplicate of an
//     enqueued event, delivered to a replica that does not remember it,
//     writes nothing to the Queue's table and inserts no job (River's
//     JobList), also when duplicates arrive together (the last round).
func TestWALPerDelivery(t *testing.T) {
	t.Parallel()
	const events = 40
	pool, _ := walServer(t)
	plain, plainTable := newStore(t, pool, pgstore.WithPurgeEvery(0))
	q := newQueue(t, pool, func(context.Context, pgx.Tx, *payments.Event) error { return nil }, nil)
	modes := []struct {
		name   string
		tables []string
		h      func() http.Handler
	}{
		// Remembering no event, so that every duplicate reaches the store.
		{"default", []string{plainTable}, func() http.Handler {
			return webhook.NewHandler(storetest.Verifier(t), func(context.Context, *payments.Event) error { return nil },
				webhook.WithClaimStore(plain), storetest.NoRecentlyDone())
		}},
		// A new handler (a replica that remembers nothing) per round.
		{"Queue", []string{q.table}, func() http.Handler {
			return webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
		}},
	}
	for _, m := range modes {
		bodies := make([][]byte, events)
		for i := range bodies {
			bodies[i] = storetest.EventBody(storetest.NewEventID(t))
		}
		mark := walMark(t, pool)
		h := m.h()
		for _, b := range bodies {
			if code := storetest.Deliver(h, b); code != http.StatusOK {
				t.Fatalf("%s: first delivery: %d", m.name, code)
			}
		}
		first := walSince(t, pool, m.tables[0], mark)
		t.Logf("%s: %d first deliveries: %d records, %d commits, %d updates (%d HOT)", m.name, events, first.records, first.commits, first.updates, first.hotUpdates)
		switch m.name {
		case "default":
			if first.updates != events || first.hotUpdates != events {
				t.Errorf("%s: %d completions made %d updates, %d of them HOT; want every one HOT", m.name, events, first.updates, first.hotUpdates)
			}
		case "Queue":
			if first.commits != events || first.updates != 0 {
				t.Errorf("%s: %d first deliveries made %d commits and %d updates; want one commit each and no update", m.name, events, first.commits, first.updates)
			}
		}

		mark = walMark(t, pool)
		for round := 0; round < 3; round++ {
			h := m.h()
			var wg sync.WaitGroup
			for _, b := range bodies {
				deliver := func() {
					if code := storetest.Deliver(h, b); code != http.StatusOK {
						t.Errorf("%s: duplicate: %d", m.name, code)
					}
				}
				if round < 2 {
					deliver()
					continue
				}
				wg.Add(1)
				go func() { defer wg.Done(); deliver() }()
			}
			wg.Wait()
		}
		// A reader may prune a page's dead row versions (the HOT
		// updates' old ones) once: a record without a commit or a flush,
		// at most one per page of the table.
		for _, table := range m.tables {
			var pages int
			if err := pool.QueryRow(testCtx(t), "SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int", table).Scan(&pages); err != nil {
				t.Fatal(err)
			}
			if dup := walSince(t, pool, table, mark); dup.records != 0 || dup.commits != 0 || dup.prunes > pages {
				t.Errorf("%s: %d duplicates of done events wrote %d records (%s), %d commits to %s; want none (and at most %d prunes)", m.name, 3*events, dup.records, dup.kinds, dup.commits, table, pages)
			}
		}
		if m.name == "Queue" {
			if n := len(q.jobs(t)); n != events {
				t.Errorf("River lists %d jobs after %d events and their duplicates, want %d", n, events, events)
			}
		}
	}
}
