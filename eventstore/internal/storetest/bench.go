package storetest

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// BenchSenders is how many deliveries BenchmarkHandler keeps in flight.
const BenchSenders = 16

// BenchmarkHandler measures a handler on store: b.N distinct events, each
// delivered once by one of BenchSenders concurrent senders, with a function
// that does nothing. It reports events/s; ns/op is the time per event with
// that concurrency.
func BenchmarkHandler(b *testing.B, store webhook.ClaimStore) {
	BenchmarkHandlerFunc(b, store, func(context.Context, *payments.Event) error { return nil })
}

// BenchmarkHandlerFunc is BenchmarkHandler with fn as the EventFunc.
func BenchmarkHandlerFunc(b *testing.B, store webhook.ClaimStore, fn webhook.EventFunc) {
	var processed atomic.Int64
	h := webhook.NewHandler(Verifier(b), func(ctx context.Context, ev *payments.Event) error {
		if err := fn(ctx, ev); err != nil {
			return err
		}
		processed.Add(1)
		return nil
	}, webhook.WithClaimStore(store))
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = EventBody(NewEventID(b))
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < BenchSenders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				if code := Deliver(h, bodies[i]); code != http.StatusOK {
					b.Errorf("delivery answered %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := processed.Load(); n != int64(b.N) {
		b.Fatalf("%d events processed, want %d", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
