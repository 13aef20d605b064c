package pgstore_test

import (
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// TestFaultMatrix runs the fault matrix (storetest.FaultMatrix) on
// PostgreSQL, in the default mode (the Queue's rows: TestQueueFaultMatrix):
//
//	PAYMENTS_FAULT_MATRIX=ci go test -run TestFaultMatrix -timeout 30m -v ./eventstore/pgstore/
func TestFaultMatrix(t *testing.T) {
	b := storetest.Backend{Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
		srv := testservers.StartPostgres(tb)
		return fixture(tb, srv.URL(), n, lease, 16), srv
	}}
	storetest.FaultMatrix(t, b, "pgstore", storetest.Faults("PostgreSQL restarted (immediate stop)"),
		storetest.LedgerMode())
}
