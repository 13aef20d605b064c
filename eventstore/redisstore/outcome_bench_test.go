package redisstore_test

import (
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
)

// The outcome benchmarks on Redis (see outcome/bench_test.go).

func BenchmarkOutcomeApply(b *testing.B) {
	ost, _, _ := outcomeStores(b, testservers.SharedRedis(b).URL(), nil)
	outcometest.BenchmarkApply(b, ost[0])
}

func BenchmarkOutcomeHandler(b *testing.B) {
	url := testservers.SharedRedis(b).URL()
	b.Run("impl=receiver", func(b *testing.B) {
		_, es, _ := outcomeStores(b, url, nil)
		outcometest.BenchmarkHandler(b, es[0], nil)
	})
	b.Run("impl=receiver+tracker", func(b *testing.B) {
		ost, es, _ := outcomeStores(b, url, nil)
		outcometest.BenchmarkHandler(b, es[0], outcome.NewTracker(ost[0]).Wrap(nil))
	})
}

func BenchmarkOutcomeAwait(b *testing.B) {
	for _, mode := range []string{"push", "poll"} {
		b.Run("wake="+mode, func(b *testing.B) {
			ost, es, _ := outcomeStores(b, testservers.SharedRedis(b).URL(), nil)
			events, receiver, waiter := es[0], ost[0], outcome.Store(ost[1])
			if mode == "poll" {
				waiter = outcometest.PollOnly(waiter)
			}
			outcometest.BenchmarkAwait(b, events, receiver, waiter, 50*time.Millisecond)
		})
	}
}
