package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// The hand-written receivers of BenchmarkFloor: what a competent merchant
// writes on the same database for the same guarantee.

// baselineDefault gives at-least-once with dedupe across replicas. Its table
// is indexed on the time a row was made, which never changes (for a purge
// by age), so that marking a claim done is a HOT update. A duplicate of a
// done event costs one SELECT; one whose first delivery is still running is
// answered 409 at once, and the service delivers it again later. (Its
// function never fails, so it has no release: a failed claim would lapse
// after the lease.)
func baselineDefault(b *testing.B, r *pgFloorRun) http.Handler {
	pool := r.pool(b)
	if r.table == "" {
		r.table = uniqueName("handmade_")
		dropOnCleanup(b, r.admin, r.table)
		for _, q := range []string{
			"CREATE TABLE " + r.table + ` (event_id text PRIMARY KEY, token text NOT NULL,
    lease_until timestamptz NOT NULL, done boolean NOT NULL DEFAULT false,
    received_at timestamptz NOT NULL DEFAULT now())`,
			"CREATE INDEX ON " + r.table + " (received_at)",
		} {
			if _, err := r.admin.Exec(testCtx(b), q); err != nil {
				b.Fatal(err)
			}
		}
	}
	var (
		selectDone = "SELECT done FROM " + r.table + " WHERE event_id = $1"
		claim      = "INSERT INTO " + r.table + ` AS e (event_id, token, lease_until)
VALUES ($1, $2, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (event_id) DO UPDATE SET token = excluded.token, lease_until = excluded.lease_until
WHERE NOT e.done AND e.lease_until <= now()
RETURNING true`
		markDone = "UPDATE " + r.table + " SET done = true WHERE event_id = $1 AND token = $2"
		leaseMs  = pgstore.DefaultLease.Milliseconds()
	)
	return storetest.HandWritten(b, pgstore.DefaultTimeout, func(ctx context.Context, ev *payments.Event) int {
		var done bool
		switch err := pool.QueryRow(ctx, selectDone, ev.ID).Scan(&done); {
		case err == nil && done:
			return http.StatusOK
		case err != nil && err != pgx.ErrNoRows:
			return http.StatusServiceUnavailable
		}
		token := newToken()
		var acquired bool
		switch err := pool.QueryRow(ctx, claim, ev.ID, token, leaseMs).Scan(&acquired); {
		case err == pgx.ErrNoRows:
			return http.StatusConflict
		case err != nil:
			return http.StatusServiceUnavailable
		}
		r.once.Add(ev.ID) // the merchant's processing
		tag, err := pool.Exec(ctx, markDone, ev.ID, token)
		if err != nil || tag.RowsAffected() != 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
}

func newToken() string {
	var t [16]byte
	_, _ = rand.Read(t[:])
	return hex.EncodeToString(t[:])
}
