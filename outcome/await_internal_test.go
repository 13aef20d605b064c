package outcome

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
)

// testEvent is a payment event about pay (reference "r"+pay).
func testEvent(t *testing.T, eventID string, typ payments.EventType, pay, status string) *payments.Event {
	t.Helper()
	ev, err := payments.ParseEvent(fmt.Appendf(nil,
		`{"id":%q,"event":%q,"created_at":"2026-11-25T12:00:00Z","data":{"id":%q,"reference":"r%s","status":%q,"is_completed":%t,"amount":"1500.00","currency":"NGN"}}`,
		eventID, typ, pay, pay, status, status == "completed"))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// subscribed reports whether the tracker runs a subscription to its store.
func subscribed(t *Tracker) bool {
	t.subMu.Lock()
	defer t.subMu.Unlock()
	return t.subCancel != nil
}

// TestAwaitWokenOncePerWrite: on a MemoryStore, every write wakes a
// waiting Await once, and nothing else wakes it, whether the Await's own
// tracker made the write (Apply and Confirmed: the tracker that receives
// the webhooks also waits) or another tracker sharing the store did.
//
// Every wake-up is counted, whatever the scheduling: each write comes once
// the Await waits; a wake-up the tracker sends itself (notify: after its
// own write, or when its subscription to the store calls) is held until
// the Await waits, so that no two merge into one; and a subscription's
// first call, which comes on a goroutine of its own, is waited for before
// the first write. The poll timer is a day away.
func TestAwaitWokenOncePerWrite(t *testing.T) {
	for _, name := range []string{"its own tracker", "another tracker"} {
		t.Run(name, func(t *testing.T) {
			store := NewMemoryStore()
			waiter := NewTracker(store, WithPollInterval(24*time.Hour))
			writer := waiter
			if name == "another tracker" {
				writer = NewTracker(store)
			}
			const n = 50                          // payments: each written twice (payment.initiated, Confirmed), then confirmed again, which writes nothing
			waits := make(chan struct{}, 16*n)    // one per wait of the Await: the writes' pace
			wakeable := make(chan struct{}, 16*n) // one per wait of the Await: notify's
			notified := make(chan struct{}, 16*n) // one per notify
			awaitDone := make(chan struct{})
			var woken atomic.Int64
			waiter.hooks = awaitHooks{
				waiting: func() {
					waits <- struct{}{}
					wakeable <- struct{}{}
				},
				woken: func() { woken.Add(1) },
				notifying: func() {
					notified <- struct{}{}
					select {
					case <-wakeable:
					case <-awaitDone:
					}
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			type awaited struct {
				res Result
				err error
			}
			done := make(chan awaited, 1)
			go func() {
				defer close(awaitDone)
				res, err := waiter.Await(ctx, "pay-0")
				done <- awaited{res, err}
			}()

			recv := func(ch <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatalf("%s: %v", what, ctx.Err())
				}
			}
			recv(waits, "the Await never waited")
			if subscribed(waiter) {
				// A subscription calls once at its start, for the writes
				// it did not see: let that call wake the Await, if it does.
				recv(notified, "the subscription never called")
				recv(waits, "the Await never waited again")
			}
			before := woken.Load()
			if before != 0 {
				t.Errorf("the Await was woken %d times before any write", before)
			}
			writes := 0
			for i := 1; i <= n; i++ {
				pay := fmt.Sprintf("pay-%d", i)
				if _, effect, err := writer.Apply(ctx, testEvent(t, fmt.Sprintf("ev-%d", i), payments.EventPaymentInitiated, pay, "pending")); err != nil || effect != EffectForward {
					t.Fatalf("Apply %s: %v, %v", pay, effect, err)
				}
				writes++
				recv(waits, "the Await never waited again")
				if err := writer.Confirmed(ctx, &payments.Payment{ID: pay, Reference: "r" + pay}); err != nil {
					t.Fatal(err)
				}
				writes++
				recv(waits, "the Await never waited again")
				if err := writer.Confirmed(ctx, &payments.Payment{ID: pay, Reference: "r" + pay}); err != nil {
					t.Fatal(err) // writes nothing: the first confirmation stands
				}
			}
			if _, _, err := writer.Apply(ctx, testEvent(t, "ev-0", payments.EventPaymentCompleted, "pay-0", "completed")); err != nil {
				t.Fatal(err)
			}
			writes++
			a := <-done
			if a.err != nil || a.res.State != StateCompleted || a.res.EventID != "ev-0" {
				t.Fatalf("Await = %+v, %v", a.res, a.err)
			}
			if got := woken.Load() - before; got != int64(writes) {
				t.Errorf("%d writes woke the Await %d times; want once per write", writes, got)
			}
		})
	}
}
