package pgstore_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestQueueFaultMatrix runs the fault matrix's Queue rows
// (storetest.QueueMatrix) on PostgreSQL: a worker process killed mid-job,
// the database frozen and restarted, a receiver killed between an
// enqueue's commit and its answer:
//
//	PAYMENTS_FAULT_MATRIX=ci go test -run TestQueueFaultMatrix -timeout 30m -v ./eventstore/pgstore/
func TestQueueFaultMatrix(t *testing.T) {
	b := storetest.QueueBackend{Start: func(tb testing.TB) (storetest.QueueRun, storetest.Server) {
		srv := testservers.StartPostgres(tb)
		admin := newPool(tb, srv.URL(), 4)
		paid := merchantTable(tb, admin)
		// The default settings: a killed worker's jobs are rescued
		// DefaultRescueAfter after they started (River's rescuer looks
		// every 30 s), within two minutes.
		q := newQueue(tb, admin, insertPaid(paid), nil)
		run := storetest.QueueRun{
			Process: func(dial storetest.Dialer, work func(context.Context, string) error) storetest.QueueProcess {
				pc, err := pgxpool.ParseConfig(srv.URL())
				if err != nil {
					tb.Fatal(err)
				}
				pc.MaxConns = 16
				pc.ConnConfig.DialFunc = pgconn.DialFunc(dial)
				pool, err := pgxpool.NewWithConfig(context.Background(), pc)
				if err != nil {
					tb.Fatal(err)
				}
				tb.Cleanup(pool.Close)
				p := q.replica(tb, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
					if err := work(ctx, ev.ID); err != nil {
						return err
					}
					return insertPaid(paid)(ctx, tx, ev)
				})
				if err := p.Start(context.Background()); err != nil {
					tb.Fatal(err)
				}
				return storetest.QueueProcess{
					Enqueue: p.Enqueue,
					Reconcile: func(ctx context.Context, evs iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error) {
						return p.Reconcile(ctx, evs)
					},
					Stop: p.Stop,
				}
			},
			Effects: func(ids []string) map[string]int {
				m := make(map[string]int, len(ids))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				rows, err := admin.Query(ctx, "SELECT event_id, count(*) FROM "+paid+" WHERE event_id = ANY($1) GROUP BY event_id", ids)
				if err != nil {
					tb.Fatal(err)
				}
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
			},
			Jobs: func() int { return len(q.jobs(tb)) },
		}
		return run, srv
	}}
	storetest.QueueMatrix(t, b, "pgstore", "PostgreSQL restarted (immediate stop)")
}
