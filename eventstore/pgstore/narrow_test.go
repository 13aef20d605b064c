package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// A completion written in a Transactional function's transaction is narrow:
// no state, token or expiry, 16 bytes shorter than the same completion
// spelled out, and every statement of the store reads it as done until a
// retention after its claim: a duplicate (both paths), the takeover of an
// expired one (both paths), and Purge.
func TestTransactionalWritesNarrowRows(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	s, table := newStore(t, pool, pgstore.WithPurgeEvery(0))
	runs := map[string]int{}
	h := webhook.NewHandler(storetest.Verifier(t), s.Transactional(func(_ context.Context, _ pgx.Tx, ev *payments.Event) error {
		runs[ev.ID]++
		return nil
	}), webhook.WithStore(s), webhook.WithRecentlyDone(0))
	deliver := func(id string) {
		t.Helper()
		if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
			t.Fatalf("delivery of %s: %d", id, code)
		}
	}
	// Ids of one length, so that the rows differ by their other columns.
	const narrow, wide, aged, agedTx, purged = "evt_narrow_01", "evt_spelled_1", "evt_aged_0001", "evt_aged_tx_1", "evt_purged_01"
	for _, id := range []string{narrow, aged, agedTx, purged} {
		deliver(id)
	}
	var nulls bool
	if err := pool.QueryRow(ctx, "SELECT state IS NULL AND token IS NULL AND expires_at IS NULL FROM "+table+" WHERE event_id = $1", narrow).Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if !nulls {
		t.Fatal("the row written in the function's transaction spells out state, token or expires_at")
	}
	// The same completion spelled out, as the store wrote it before.
	if _, err := pool.Exec(ctx, "INSERT INTO "+table+` (event_id, state, token, expires_at, claimed_at)
		SELECT $1, 'done', '', claimed_at + interval '7 days', claimed_at FROM `+table+` WHERE event_id = $2`, wide, narrow); err != nil {
		t.Fatal(err)
	}
	var narrowSize, wideSize int
	if err := pool.QueryRow(ctx, "SELECT pg_column_size(e.*) FROM "+table+" AS e WHERE event_id = $1", narrow).Scan(&narrowSize); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT pg_column_size(e.*) FROM "+table+" AS e WHERE event_id = $1", wide).Scan(&wideSize); err != nil {
		t.Fatal(err)
	}
	if wideSize-narrowSize != 16 {
		t.Errorf("row sizes: narrow %d, spelled out %d bytes; want 16 bytes less", narrowSize, wideSize)
	}

	// Live: a duplicate on both paths.
	deliver(narrow)
	if c, err := s.Claim(ctx, narrow); err != nil || c.Status != webhook.ClaimDone {
		t.Errorf("Claim of a narrow completion: %v, %v; want done", c.Status, err)
	}
	// Claimed a retention ago (and a day): expired. Taken over on the
	// usual path and in a transaction, and purged.
	if _, err := pool.Exec(ctx, "UPDATE "+table+" SET claimed_at = now() - interval '8 days' WHERE event_id = ANY($1)", []string{aged, agedTx, purged}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(ctx, aged)
	if err != nil || c.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim of an expired narrow completion: %v, %v; want acquired", c.Status, err)
	}
	if err := s.Complete(ctx, c); err != nil {
		t.Fatal(err)
	}
	deliver(agedTx)
	if n, err := s.Purge(ctx); err != nil || n != 1 {
		t.Errorf("Purge = %d, %v; want the one expired narrow completion left", n, err)
	}
	if got := ids(t, pool, table); got != fmt.Sprintf("%s,%s,%s,%s", aged, agedTx, narrow, wide) {
		t.Errorf("rows: %s", got)
	}
	want := map[string]int{narrow: 1, aged: 1, agedTx: 2, purged: 1}
	for id, n := range want {
		if runs[id] != n {
			t.Errorf("%s ran %d times, want %d", id, runs[id], n)
		}
	}
}

// release01Claim is the claim statement of release 0.1, with %[1]s for the
// table: what a replica of 0.1 still serving during a rolling upgrade runs.
const release01Claim = `WITH claimed AS (
    INSERT INTO %[1]s AS e (event_id, state, token, expires_at)
    VALUES ($1, 'processing', $2, now() + $3::bigint * interval '1 microsecond')
    ON CONFLICT (event_id) DO UPDATE
        SET state = 'processing', token = excluded.token, expires_at = excluded.expires_at
        WHERE e.expires_at <= now()
    RETURNING 'acquired'::text AS status
)
SELECT status FROM claimed
UNION ALL
SELECT CASE WHEN e.state = 'done' AND e.expires_at > now() THEN 'done' ELSE 'in progress' END
FROM %[1]s AS e
WHERE e.event_id = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`

// A replica of release 0.1 on a migrated table finds a narrow completion in
// progress, fresh or expired: it never takes the event again.
func TestOldReleaseReadsNarrowRowsAsInProgress(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	s, table := newStore(t, pool, pgstore.WithPurgeEvery(0))
	h := webhook.NewHandler(storetest.Verifier(t), s.Transactional(func(context.Context, pgx.Tx, *payments.Event) error { return nil }),
		webhook.WithStore(s))
	const fresh, expired = "evt_fresh_01", "evt_expired1"
	for _, id := range []string{fresh, expired} {
		if code := storetest.Deliver(h, storetest.EventBody(id)); code != http.StatusOK {
			t.Fatalf("delivery of %s: %d", id, code)
		}
	}
	if _, err := pool.Exec(ctx, "UPDATE "+table+" SET claimed_at = now() - interval '30 days' WHERE event_id = $1", expired); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fresh, expired} {
		var status string
		if err := pool.QueryRow(ctx, fmt.Sprintf(release01Claim, table), id, "old-token", int64(5e6)).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != "in progress" {
			t.Errorf("0.1's claim of %s: %q, want in progress", id, status)
		}
	}
}
