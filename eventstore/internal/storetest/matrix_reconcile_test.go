package storetest

import (
	"fmt"
	"testing"

	"github.com/paymentsapi/payments-go/webhook"
)

// The matrix's last resort works: events no delivery processed are found,
// and Reconcile on a live replica (one of three, one killed) processes
// each of them once, and none of those a delivery already processed.
func TestReconcileRunRecoversWhatNoDeliveryProcessed(t *testing.T) {
	shared := webhook.NewMemoryClaimStore(0)
	f := Fixture{Replica: func(Dialer) webhook.ClaimStore { return shared }}
	w := newWorker()
	fn, effects := LedgerMode().Setup(t, f, w)
	rs := newReplicaSet(t, f, fn, matrixReplicas)
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt-%016d", i)
	}
	rs.kill(0)
	if code, _, _ := rs.live().deliver(EventBody(ids[0])); code != 200 {
		t.Fatalf("delivery answered %d", code)
	}
	if lost := neverDelivered(ids, effects); len(lost) != 5 {
		t.Fatalf("%d events processed by no delivery, want 5: %v", len(lost), lost)
	}
	if n := reconcileRun(t, rs, ids); n != 5 {
		t.Errorf("reconcile processed %d events, want 5", n)
	}
	for id, n := range effects(ids) {
		if n != 1 {
			t.Errorf("event %s processed %d times, want once", id, n)
		}
	}
	rs.shutdown(t)
}
