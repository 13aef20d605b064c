package webhook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A step of the wall clock moves no MemoryClaimStore lease: leases run on the
// monotonic clock. The store's wall clock (s.now, what time.Now's wall
// reading gives) is stepped an hour forward, then two hours back, while a
// claim is held: forward, the claim must not lapse (a redelivery would run
// the function beside the first); back, a claim nobody renews must still
// lapse after its lease.
func TestMemoryClaimStoreLeasesIgnoreWallClockSteps(t *testing.T) {
	var step atomic.Int64
	s := NewMemoryClaimStoreWith(0, WithMemoryLease(time.Minute))
	s.init()
	s.now = func() time.Time { return time.Now().Round(0).Add(time.Duration(step.Load())) }
	ctx := context.Background()

	a, err := s.Claim(ctx, "evt_step")
	if err != nil || a.Status != ClaimAcquired {
		t.Fatalf("first claim: %v %v", a.Status, err)
	}
	step.Store(int64(time.Hour))
	if c, err := s.Claim(ctx, "evt_step"); err != nil || c.Status != ClaimInProgress {
		t.Fatalf("after the wall clock stepped an hour forward, a second claim got %v (%v), want in progress", c.Status, err)
	}
	if _, err := s.Renew(ctx, a); err != nil {
		t.Fatalf("renewal after the step: %v", err)
	}
	if err := s.Complete(ctx, a); err != nil {
		t.Fatalf("completion after the step: %v", err)
	}

	short := NewMemoryClaimStoreWith(0, WithMemoryLease(20*time.Millisecond))
	short.init()
	short.now = s.now
	if c, _ := short.Claim(ctx, "evt_back"); c.Status != ClaimAcquired {
		t.Fatalf("claim: %v", c.Status)
	}
	step.Store(int64(-time.Hour))
	time.Sleep(50 * time.Millisecond)
	if c, err := short.Claim(ctx, "evt_back"); err != nil || c.Status != ClaimAcquired {
		t.Fatalf("after the wall clock stepped back, a claim past the lease got %v (%v), want acquired", c.Status, err)
	}
}
