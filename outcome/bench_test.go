package outcome_test

import (
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// The outcome benchmarks on the MemoryStore; pgstore and redisstore run the
// same (outcome_bench_test.go there). Figures are in BENCHMARKS.md.

func BenchmarkOutcomeApply(b *testing.B) {
	outcometest.BenchmarkApply(b, outcome.NewMemoryStore())
}

// The receiver alone, and the receiver feeding a tracker, on memory stores.
func BenchmarkOutcomeHandler(b *testing.B) {
	b.Run("impl=receiver", func(b *testing.B) {
		outcometest.BenchmarkHandler(b, webhook.NewMemoryClaimStore(webhook.DefaultMemoryClaimStoreSize), nil)
	})
	b.Run("impl=receiver+tracker", func(b *testing.B) {
		outcometest.BenchmarkHandler(b, webhook.NewMemoryClaimStore(webhook.DefaultMemoryClaimStoreSize),
			outcome.NewTracker(outcome.NewMemoryStore()).Wrap(nil))
	})
}

// Await in a second tracker on the same MemoryStore (it polls).
func BenchmarkOutcomeAwait(b *testing.B) {
	for _, mode := range []string{"push", "poll"} {
		b.Run("wake="+mode, func(b *testing.B) {
			s := outcome.NewMemoryStore()
			events, receiver, waiter := webhook.NewMemoryClaimStore(webhook.DefaultMemoryClaimStoreSize), s, outcome.Store(s)
			if mode == "poll" {
				waiter = outcometest.PollOnly(waiter)
			}
			outcometest.BenchmarkAwait(b, events, receiver, waiter, 50*time.Millisecond)
		})
	}
}
