package outcome

import (
	"context"
	"testing"

	"github.com/paymentsapi/payments-go"
)

// plainStore is a MemoryStore seen only as a Store: no Subscriber, and not
// a *MemoryStore, so that its tracker wakes its waiters itself (notify).
type plainStore struct{ Store }

// TestConfirmedWakesOnlyWhenItWrites: Confirmed wakes the waiters when it
// records a confirmation, not when the payment's first confirmation stands
// and nothing is written.
func TestConfirmedWakesOnlyWhenItWrites(t *testing.T) {
	tr := NewTracker(plainStore{NewMemoryStore()})
	notified := 0 // Confirmed calls notify on the test's goroutine
	tr.hooks.notifying = func() { notified++ }
	ctx := context.Background()
	p := &payments.Payment{ID: "pay-1", Reference: "order-1"}
	for i, want := range []int{1, 1} {
		if err := tr.Confirmed(ctx, p); err != nil {
			t.Fatal(err)
		}
		if notified != want {
			t.Fatalf("after Confirmed #%d: %d wake-ups, want %d", i+1, notified, want)
		}
	}
}
