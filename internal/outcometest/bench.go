package outcometest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// BenchSenders is how many goroutines the benchmarks keep busy at once.
const BenchSenders = 16

// bodies makes n payment.completed bodies, each about a payment of its own
// (so every one is a write).
func bodies(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		id := NewID("p")
		out[i] = Body(NewID("e"), payments.EventPaymentCompleted, id, "r"+id)
	}
	return out
}

// fanOut runs f(i) for i in [0, n) from BenchSenders goroutines and returns
// the time it took.
func fanOut(n int, f func(i int) bool) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < BenchSenders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || !f(i) {
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkApply measures Tracker.Apply on store from BenchSenders
// goroutines: b.N events, each the first of its payment (a write). It
// reports updates/s.
func BenchmarkApply(b *testing.B, store outcome.Store) {
	tr := outcome.NewTracker(store)
	evs := make([]*payments.Event, b.N)
	for i, body := range bodies(b.N) {
		ev, err := payments.ParseEvent(body)
		if err != nil {
			b.Fatal(err)
		}
		evs[i] = ev
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	elapsed := fanOut(b.N, func(i int) bool {
		if _, eff, err := tr.Apply(ctx, evs[i]); err != nil || eff != outcome.EffectForward {
			b.Errorf("Apply: %s, %v", eff, err)
			return false
		}
		return true
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "updates/s")
}

// BenchmarkHandler measures a webhook handler on events with fn as its
// function, b.N distinct events delivered once each by BenchSenders
// senders. It reports events/s. Give fn = nil for the receiver alone, or a
// tracker's Wrap(nil) for the receiver feeding the tracker.
func BenchmarkHandler(b *testing.B, events webhook.ClaimStore, fn webhook.EventFunc) {
	if fn == nil {
		fn = func(context.Context, *payments.Event) error { return nil }
	}
	h := webhook.NewHandler(Verifier(b), fn, webhook.WithClaimStore(events))
	bs := bodies(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	elapsed := fanOut(b.N, func(i int) bool {
		if code := Deliver(h, bs[i]); code != http.StatusOK {
			b.Errorf("delivery answered %d", code)
			return false
		}
		return true
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

// BenchmarkAwait measures the time from a delivery's arrival at a handler
// whose tracker writes to receiver, to the return of an Await in another
// tracker on waiter (another replica's view of the same store: it learns
// of the outcome only by reading the store). Each iteration starts one
// Await, lets it wait settle for 20ms, then delivers. It reports the
// median and 99th percentile in ms.
func BenchmarkAwait(b *testing.B, events webhook.ClaimStore, receiver, waiter outcome.Store, poll time.Duration) {
	h := webhook.NewHandler(Verifier(b), outcome.NewTracker(receiver).Wrap(nil), webhook.WithClaimStore(events))
	tr := outcome.NewTracker(waiter, PollInterval(poll))
	lat := make([]time.Duration, 0, b.N)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := NewID("p")
		done := make(chan time.Time, 1)
		go func() {
			if _, err := tr.Await(ctx, id); err != nil {
				b.Error(err)
			}
			done <- time.Now()
		}()
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		if code := Deliver(h, Body(NewID("e"), payments.EventPaymentFailed, id, "r"+id)); code != http.StatusOK {
			b.Fatalf("delivery answered %d", code)
		}
		lat = append(lat, (<-done).Sub(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// PollOnly hides a store's subscription (outcome.Subscriber): Await on it
// polls only.
func PollOnly(s outcome.Store) outcome.Store { return struct{ outcome.Store }{s} }
