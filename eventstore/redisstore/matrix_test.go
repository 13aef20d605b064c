package redisstore_test

import (
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// TestFaultMatrix runs the fault matrix (storetest.FaultMatrix) on Redis,
// whose own server persists every write (appendonly yes, appendfsync
// always):
//
//	PAYMENTS_FAULT_MATRIX=ci go test -run TestFaultMatrix -timeout 30m -v ./eventstore/redisstore/
func TestFaultMatrix(t *testing.T) {
	b := storetest.Backend{Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
		srv := testservers.StartRedis(tb, true)
		return fixture(tb, srv.URL(), n, lease, 16), srv
	}}
	storetest.FaultMatrix(t, b, "redisstore", storetest.Faults("Redis restarted with AOF (SIGKILL)"),
		storetest.LedgerMode())
}
