package eventstore_test

import (
	"testing"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/webhook"
)

// The in-memory store under the same load as the shared stores'
// BenchmarkHandler, for comparison (see BENCHMARKS.md).
func BenchmarkHandlerMemoryStore(b *testing.B) {
	storetest.BenchmarkHandler(b, webhook.NewMemoryClaimStore(0))
}
