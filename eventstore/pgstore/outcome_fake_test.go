package pgstore_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// The fake delivers every event twice, late and newest first to two
// replicas, each with its own pool, sharing the event table and the
// outcome table: the tracker fed by Wrap.
func TestOutcomeStoreFakeChaos(t *testing.T) {
	t.Parallel()
	outcometest.Fake(t, func(tb testing.TB, _ *slog.Logger) [2]outcometest.Replica {
		ost, es, _ := outcomeStores(tb, testservers.SharedPostgres(tb).URL())
		return [2]outcometest.Replica{{Events: es[0], Outcomes: ost[0]}, {Events: es[1], Outcomes: ost[1]}}
	})
}

// The same with Transactional: each outcome commits in the transaction
// that marks its event done.
func TestOutcomeStoreFakeChaosTransactional(t *testing.T) {
	t.Parallel()
	outcometest.Fake(t, func(tb testing.TB, _ *slog.Logger) [2]outcometest.Replica {
		ost, es, _ := outcomeStores(tb, testservers.SharedPostgres(tb).URL())
		var rs [2]outcometest.Replica
		for i := range rs {
			e, o := es[i], ost[i]
			rs[i] = outcometest.Replica{Events: e, Outcomes: o, Wrap: func(_ *outcome.Tracker, fn webhook.EventFunc) webhook.EventFunc {
				return e.Transactional(o.WrapTx(func(ctx context.Context, _ pgx.Tx, ev *payments.Event) error { return fn(ctx, ev) }))
			}}
		}
		return rs
	})
}
