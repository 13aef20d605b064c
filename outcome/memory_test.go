package outcome_test

import (
	"log/slog"
	"testing"

	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

func TestMemoryStoreConformance(t *testing.T) {
	outcometest.Conformance(t, func(testing.TB) [2]outcome.Store {
		s := outcome.NewMemoryStore()
		return [2]outcome.Store{s, s}
	})
}

// Two handlers of one process sharing a MemoryStore for outcomes and a
// webhook.MemoryClaimStore for event ids.
func TestMemoryStoreReplicas(t *testing.T) {
	outcometest.Replicas(t, func(testing.TB, *slog.Logger) [2]outcometest.Replica {
		r := outcometest.Replica{Events: webhook.NewMemoryClaimStore(10000), Outcomes: outcome.NewMemoryStore()}
		return [2]outcometest.Replica{r, r}
	})
}

// Two trackers on one MemoryStore wake each other's waiters.
func TestMemoryStoreAwaitWoken(t *testing.T) {
	s := outcome.NewMemoryStore()
	outcometest.AwaitWoken(t, outcometest.Replica{Events: webhook.NewMemoryClaimStore(100), Outcomes: s}, s)
}
