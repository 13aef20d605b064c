package pgstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
	s, err := pgstore.New(pool, pgstore.WithTable(table), pgstore.WithPurgeEvery(0))
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
