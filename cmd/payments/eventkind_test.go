package main

import (
	"slices"
	"testing"

	payments "github.com/paymentsapi/payments-go"
	// A test-only import of the root module's internal package: it checks
	// the copy and is never linked into the command.
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

// TestEventKindsCopy: the command's copy of the event kinds is the root
// module's list, in the same order.
func TestEventKindsCopy(t *testing.T) {
	if want := eventkind.All(); !slices.Equal(eventKinds, want) {
		t.Fatalf("eventKinds = %v\nwant internal/eventkind's %v: change both together", eventKinds, want)
	}
	if !knownEventKind(payments.EventPaymentCompleted) || knownEventKind("payment.unknown") {
		t.Fatal("knownEventKind does not tell a kind of the list from one outside it")
	}
}
