package outcome_test

import (
	"log/slog"
	"testing"

	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// The fake delivers every event twice, late and newest first to two
// handlers of one process sharing a MemoryStore for outcomes and a
// webhook.MemoryClaimStore for event ids.
func TestMemoryStoreFakeChaos(t *testing.T) {
	outcometest.Fake(t, func(testing.TB, *slog.Logger) [2]outcometest.Replica {
		r := outcometest.Replica{Events: webhook.NewMemoryClaimStore(10000), Outcomes: outcome.NewMemoryStore()}
		return [2]outcometest.Replica{r, r}
	})
}
