package webhook

import (
	"context"
	"testing"
	"time"
)

// A MemoryClaimStore ends the wait on an id's claim when the claim is
// completed, released, or taken over once its lease lapsed, and reports
// how long the lease has left; with no live claim the wait is over at once.
func TestMemoryClaimStoreSettledEndsWaits(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	s := newMemoryClaimStore(0, func(s *MemoryClaimStore) {
		s.now, s.clock, s.lease = func() time.Time { return now }, true, time.Minute
	})
	isClosed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if ch, _ := s.settled("evt_none"); !isClosed(ch) {
		t.Fatal("no claim on the id: the wait should be over at once")
	}
	for _, end := range []string{"complete", "release", "take over"} {
		id := "evt_" + end
		c, _ := s.Claim(ctx, id)
		ch, left := s.settled(id)
		if isClosed(ch) || left != time.Minute {
			t.Fatalf("%s: a live claim: closed %v, lease left %v; want open, 1m0s", end, isClosed(ch), left)
		}
		now = now.Add(20 * time.Second)
		if _, left = s.settled(id); left != 40*time.Second {
			t.Fatalf("%s: lease left %v after 20s, want 40s", end, left)
		}
		switch end {
		case "complete":
			_ = s.Complete(ctx, c)
		case "release":
			_ = s.Release(ctx, c)
		case "take over":
			now = now.Add(time.Minute) // the lease lapsed
			if c2, _ := s.Claim(ctx, id); c2.Status != ClaimAcquired {
				t.Fatalf("a lapsed claim was not taken over: %v", c2.Status)
			}
		}
		if !isClosed(ch) {
			t.Errorf("%s: the wait on the claim did not end", end)
		}
	}
	if n := len(s.waiting); n != 0 {
		t.Errorf("%d waits left in the store after their claims settled, want 0", n)
	}
}
