package pgstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
)

// The outcome benchmarks on PostgreSQL (see outcome/bench_test.go): the
// tracker's updates, the receiver with and without it on the same server,
// and the delay of an Await in another replica.

func BenchmarkOutcomeApply(b *testing.B) {
	for _, notify := range []bool{false, true} {
		b.Run(fmt.Sprintf("notify=%t", notify), func(b *testing.B) {
			var opts []pgstore.Option
			if !notify {
				opts = append(opts, pgstore.NoNotify())
			}
			ost, _, _ := outcomeStores(b, testservers.SharedPostgres(b).URL(), opts...)
			outcometest.BenchmarkApply(b, ost[0])
		})
	}
}

func BenchmarkOutcomeHandler(b *testing.B) {
	url := testservers.SharedPostgres(b).URL()
	b.Run("impl=receiver", func(b *testing.B) {
		_, es, _ := outcomeStores(b, url)
		outcometest.BenchmarkHandler(b, es[0], nil)
	})
	b.Run("impl=receiver+tracker", func(b *testing.B) {
		ost, es, _ := outcomeStores(b, url, pgstore.NoNotify())
		outcometest.BenchmarkHandler(b, es[0], outcome.NewTracker(ost[0]).Wrap(nil))
	})
	b.Run("impl=receiver+tracker+notify", func(b *testing.B) {
		ost, es, _ := outcomeStores(b, url)
		outcometest.BenchmarkHandler(b, es[0], outcome.NewTracker(ost[0]).Wrap(nil))
	})
}

func BenchmarkOutcomeAwait(b *testing.B) {
	for _, mode := range []string{"push", "poll"} {
		b.Run("wake="+mode, func(b *testing.B) {
			ost, es, _ := outcomeStores(b, testservers.SharedPostgres(b).URL())
			events, receiver, waiter := es[0], ost[0], outcome.Store(ost[1])
			if mode == "poll" {
				waiter = outcometest.PollOnly(waiter)
			}
			outcometest.BenchmarkAwait(b, events, receiver, waiter, 50*time.Millisecond)
		})
	}
}
