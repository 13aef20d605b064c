package pgstore_test

import (
	"context"
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

// TestFaultMatrix runs the fault matrix (storetest.FaultMatrix) on
// PostgreSQL, in the default mode and with Transactional:
//
//	PAYMENTS_FAULT_MATRIX=ci go test -run TestFaultMatrix -timeout 30m -v ./eventstore/pgstore/
func TestFaultMatrix(t *testing.T) {
	var (
		admin *pgxpool.Pool
		url   string
	)
	b := storetest.Backend{Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
		srv := testservers.StartPostgres(tb)
		url = srv.URL()
		admin = newPool(tb, url, 2)
		return fixture(tb, url, n, lease, 16), srv
	}}
	transactional := storetest.Mode{Name: "Transactional", ExactlyOnce: true, Setup: func(tb testing.TB, f storetest.Fixture, w *storetest.Worker) (func(webhook.Store, func() bool) webhook.EventFunc, func([]string) map[string]int) {
		paid := merchantTable(tb, admin)
		insert := insertPaid(paid)
		fn := func(s webhook.Store, alive func() bool) webhook.EventFunc {
			// A dead replica's transaction dies with its connections. The
			// work is a statement in the transaction, which keeps it busy,
			// as the package's rules ask of a function longer than the
			// lease (an idle one is stopped: TestTransactionalIdleFunctionIsStopped).
			return s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
				if err := insert(ctx, tx, ev); err != nil {
					return err
				}
				return w.DoWith(ctx, ev.ID, alive, func(ctx context.Context, d time.Duration) error {
					_, err := tx.Exec(ctx, "SELECT pg_sleep($1)", d.Seconds())
					return err
				})
			})
		}
		effects := func(ids []string) map[string]int {
			m := make(map[string]int, len(ids))
			rows, err := admin.Query(testCtx(tb), "SELECT event_id, count(*) FROM "+paid+" GROUP BY event_id")
			if err != nil {
				tb.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var n int
				if err := rows.Scan(&id, &n); err != nil {
					tb.Fatal(err)
				}
				m[id] = n
			}
			if err := rows.Err(); err != nil {
				tb.Fatal(err)
			}
			return m
		}
		return fn, effects
	}}
	storetest.FaultMatrix(t, b, "pgstore", storetest.Faults("PostgreSQL restarted (immediate stop)"),
		storetest.LedgerMode(), transactional)
}
