package pgstore_test

import (
	"log/slog"
	"testing"

	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
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
