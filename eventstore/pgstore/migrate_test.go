package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// previousDDL is the table of releases up to 0.1 (and the main branch
// before the HOT schema), with %[1]s for its name.
const previousDDL = `CREATE TABLE %[1]s (
    event_id   text        PRIMARY KEY,
    state      text        NOT NULL CHECK (state IN ('processing', 'done')),
    token      text        NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX %[1]s_expires_at_idx ON %[1]s (expires_at)`

// Migrate upgrades a table made by an earlier release, rows and all: the
// index on expires_at gives way to one on claimed_at, each row's claim
// time comes from its expiry, done events stay done, expired ones are
// purged, and the store works on it.
func TestMigrateUpgradesThePreviousTable(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	table := uniqueName("events_")
	dropOnCleanup(t, pool, table)
	if _, err := pool.Exec(ctx, fmt.Sprintf(previousDDL, table)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` VALUES
		('done-kept', 'done', 't1', now() + interval '3 days'),
		('done-expired', 'done', 't2', now() - interval '1 hour'),
		('processing', 'processing', 't3', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.NewClaimStore(pool, pgstore.WithTable(table), pgstore.WithPurgeEvery(0))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // and again: nothing left to do
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var indexes string
	if err := pool.QueryRow(ctx, `SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes WHERE tablename = $1`, table).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(indexes, "expires_at") || !strings.Contains(indexes, "(claimed_at)") {
		t.Errorf("indexes after the upgrade: %s; want the key and claimed_at", indexes)
	}
	var claimedAgo time.Duration
	if err := pool.QueryRow(ctx, `SELECT (EXTRACT(EPOCH FROM now() - claimed_at) * 1e6)::bigint FROM `+table+` WHERE event_id = 'done-kept'`).Scan(&claimedAgo); err != nil {
		t.Fatal(err)
	}
	// Expires in 3 days of a 7-day retention: claimed 4 days ago.
	if want := 4 * 24 * time.Hour; (claimedAgo*time.Microsecond - want).Abs() > time.Minute {
		t.Errorf("done-kept claimed %v ago, want %v", claimedAgo*time.Microsecond, want)
	}
	if c, err := s.Claim(ctx, "done-kept"); err != nil || c.Status != webhook.ClaimDone {
		t.Errorf("Claim of a done event of the old table: %v, %v; want done", c.Status, err)
	}
	if c, err := s.Claim(ctx, "processing"); err != nil || c.Status != webhook.ClaimInProgress {
		t.Errorf("Claim of a live claim of the old table: %v, %v; want in progress", c.Status, err)
	}
	if n, err := s.Purge(ctx); err != nil || n != 1 {
		t.Errorf("Purge = %d, %v; want the expired completion", n, err)
	}
	c, err := s.Claim(ctx, "new")
	if err != nil || c.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim of a new event: %v, %v", c.Status, err)
	}
	if err := s.Complete(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, pool, table); got != "done-kept,new,processing" {
		t.Errorf("rows: %s", got)
	}
}

// hotDDL is the table of the main branch between the HOT schema and the
// narrow completions (never released), with %[1]s for its name.
const hotDDL = `CREATE TABLE %[1]s (
    event_id   text        PRIMARY KEY,
    state      text        NOT NULL CHECK (state IN ('processing', 'done')),
    token      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 90);
CREATE INDEX %[1]s_claimed_at_idx ON %[1]s (claimed_at)`

// Migrate lets a table with state, token and expires_at NOT NULL take the
// narrow completions that 0.2's Transactional wrote; its rows keep their
// meaning.
func TestMigrateAllowsNarrowRows(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	for name, ddl := range map[string]string{"0.1": previousDDL, "hot": hotDDL} {
		table := uniqueName("events_")
		dropOnCleanup(t, pool, table)
		if _, err := pool.Exec(ctx, fmt.Sprintf(ddl, table)); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (event_id, state, token, expires_at) VALUES
			('done-kept-1', 'done', '', now() + interval '3 days'),
			('processing', 'processing', 't3', now() + interval '1 hour')`); err != nil {
			t.Fatal(err)
		}
		s, err := pgstore.NewClaimStore(pool, pgstore.WithTable(table), pgstore.WithPurgeEvery(0))
		if err != nil {
			t.Fatal(err)
		}
		h := webhook.NewHandler(storetest.Verifier(t), func(context.Context, *payments.Event) error { return nil },
			webhook.WithClaimStore(s), storetest.NoRecentlyDone(), webhook.WithClaimWait(0))
		for range 2 {
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		var notNull []string
		rows, err := pool.Query(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnotnull AND attnum > 0 ORDER BY attname`, table)
		if err != nil {
			t.Fatal(err)
		}
		if notNull, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(notNull, ","); got != "claimed_at,event_id" {
			t.Errorf("%s: NOT NULL columns after Migrate: %s; want claimed_at,event_id", name, got)
		}
		for id, want := range map[string]int{"done-kept-1": http.StatusOK, "evt_new_01": http.StatusOK, "processing": http.StatusConflict} {
			if code := storetest.Deliver(h, storetest.EventBody(id)); code != want {
				t.Errorf("%s: delivery of %s after Migrate: %d, want %d", name, id, code, want)
			}
		}
		// A narrow completion, as 0.2's Transactional wrote it, reads as done.
		if _, err := pool.Exec(ctx, "INSERT INTO "+table+" (event_id, claimed_at) VALUES ('narrow-02', now())"); err != nil {
			t.Fatalf("%s: a narrow row after Migrate: %v", name, err)
		}
		if code := storetest.Deliver(h, storetest.EventBody("narrow-02")); code != http.StatusOK {
			t.Errorf("%s: delivery of a narrow row's event: %d, want 200", name, code)
		}
		if got := ids(t, pool, table); got != "done-kept-1,evt_new_01,narrow-02,processing" {
			t.Errorf("%s: rows: %s", name, got)
		}
	}
}

// Migrate of an up-to-date table takes no lock on it: it completes while
// another transaction holds a claim's row lock (a claim in flight), which
// CREATE INDEX IF NOT EXISTS alone would wait for.
func TestMigrateOfAnUpToDateTableLocksNothing(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	s, table := newStore(t, pool)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (event_id, claimed_at) VALUES ('in-flight', now())"); err != nil {
		t.Fatal(err)
	}
	// Were Migrate to wait for the table, it would wait for that
	// transaction, which ends only after the test: its deadline says so.
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Migrate(mctx); err != nil {
		t.Fatalf("Migrate beside a transaction in flight: %v", err)
	}
}
