package eventstore_test

import (
	"testing"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
)

// The in-memory store under the same load as the shared stores'
// BenchmarkHandler, for comparison (see BENCHMARKS.md).
func BenchmarkHandlerMemoryStore(b *testing.B) {
	storetest.BenchmarkHandler(b, payments.NewMemoryEventStore(0))
}
