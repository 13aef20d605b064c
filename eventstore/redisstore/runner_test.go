package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// BenchmarkContextTimeout: a Claim and a Complete of a new event, from 16
// goroutines, on a client that keeps the store's deadlines itself
// (ContextTimeoutEnabled, commands sent from the caller's goroutine) and
// on one that does not (each command handed to the store's runner), in
// the same run:
//
//	go test -run '^$' -bench BenchmarkContextTimeout -count 5 ./eventstore/redisstore/
func BenchmarkContextTimeout(b *testing.B) {
	for _, enabled := range []bool{false, true} {
		b.Run("ContextTimeoutEnabled="+strconv.FormatBool(enabled), func(b *testing.B) {
			c := newClientWith(b, testservers.SharedRedis(b).URL(), 16, func(o *redis.Options) {
				o.ContextTimeoutEnabled = enabled
			})
			s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(b, c)))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					claim, err := s.Claim(ctx, "evt_"+strconv.FormatInt(n.Add(1), 10))
					if err != nil || claim.Status != webhook.ClaimAcquired {
						b.Errorf("Claim = %v, %v", claim.Status, err)
						return
					}
					if err := s.Complete(ctx, claim); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
