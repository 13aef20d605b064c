package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

// Conformance runs the webhook.ClaimStore contract against b, one subtest per rule.
func Conformance(t *testing.T, b Backend) {
	t.Run("ClaimCompleteRelease", func(t *testing.T) { t.Parallel(); claimCompleteRelease(t, b) })
	t.Run("WrongTokenChangesNothing", func(t *testing.T) { t.Parallel(); wrongToken(t, b) })
	t.Run("LeaseLapseAndTakeover", func(t *testing.T) { t.Parallel(); leaseTakeover(t, b) })
	t.Run("RenewKeepsTheClaim", func(t *testing.T) { t.Parallel(); renewKeeps(t, b) })
	t.Run("LateCompleteOfALapsedClaim", func(t *testing.T) { t.Parallel(); lateComplete(t, b) })
	t.Run("RetentionExpiry", func(t *testing.T) { t.Parallel(); retentionExpiry(t, b) })
	t.Run("ConcurrentClaimsOneWinner", func(t *testing.T) { t.Parallel(); oneWinner(t, b) })
	t.Run("EmptyEventID", func(t *testing.T) { t.Parallel(); emptyID(t, b) })
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// claim claims id and fails the test unless the status is want.
func claim(t *testing.T, s webhook.ClaimStore, id string, want webhook.ClaimStatus) webhook.Claim {
	t.Helper()
	c, err := s.Claim(ctxFor(t), id)
	if err != nil {
		t.Fatalf("Claim(%s): %v", id, err)
	}
	if c.Status != want || c.EventID != id {
		t.Fatalf("Claim(%s) = %v for %q, want %v", id, c.Status, c.EventID, want)
	}
	if (c.Token != "") != (want == webhook.ClaimAcquired) {
		t.Fatalf("Claim(%s) %v with token %q", id, c.Status, c.Token)
	}
	return c
}

func wantLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, webhook.ErrClaimLost) {
		t.Fatalf("%s = %v, want ErrClaimLost", what, err)
	}
}

func claimCompleteRelease(t *testing.T, b Backend) {
	f := b.Stores(t, 1, 0)
	s, ctx := f.Stores[0], ctxFor(t)
	id := NewEventID(t)

	before := time.Now()
	c := claim(t, s, id, webhook.ClaimAcquired)
	const lease = webhook.DefaultLease
	if d := c.LeaseExpires.Sub(before); d < lease || d > lease+time.Second {
		t.Errorf("LeaseExpires is %v after the claim, want the default lease, %v", d, lease)
	}
	if ttl := f.TTL(id); ttl < lease-time.Second || ttl > lease+time.Second {
		t.Errorf("stored claim lasts %v, want about %v", ttl, lease)
	}
	claim(t, s, id, webhook.ClaimInProgress)

	// Release frees the id: the next claim gets it, with a new token.
	if err := s.Release(ctx, c); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantLost(t, "second Release", s.Release(ctx, c))
	_, err := s.Renew(ctx, c)
	wantLost(t, "Renew after Release", err)
	c2 := claim(t, s, id, webhook.ClaimAcquired)
	if c2.Token == c.Token {
		t.Fatal("two claims got the same token")
	}
	wantLost(t, "Complete of the released claim while another holds the id", s.Complete(ctx, c))

	if err := s.Complete(ctx, c2); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := s.Complete(ctx, c2); err != nil {
		t.Errorf("Complete again with the same token: %v, want nil", err)
	}
	if ttl := f.TTL(id); ttl < 7*24*time.Hour-time.Minute || ttl > 7*24*time.Hour {
		t.Errorf("completion is kept %v, want the default retention, 168h", ttl)
	}
	claim(t, s, id, webhook.ClaimDone)
	wantLost(t, "Release after Complete", s.Release(ctx, c2))
	if r, err := s.Renew(ctx, c2); err != nil || !r.LeaseExpires.Equal(c2.LeaseExpires) {
		t.Errorf("Renew after its own Complete = %v, %v; want the claim unchanged, no error", r.LeaseExpires, err)
	}
	wantLost(t, "Complete of the first claim after another's", s.Complete(ctx, c))
	claim(t, s, id, webhook.ClaimDone)
}

func wrongToken(t *testing.T, b Backend) {
	f := b.Stores(t, 2, 0)
	a, other, ctx := f.Stores[0], f.Stores[1], ctxFor(t)
	id := NewEventID(t)
	c := claim(t, a, id, webhook.ClaimAcquired)
	for _, forged := range []webhook.Claim{
		{EventID: id, Status: webhook.ClaimAcquired, Token: "not-the-token"},
		{EventID: id, Status: webhook.ClaimAcquired},
	} {
		wantLost(t, "Complete with a forged claim", other.Complete(ctx, forged))
		wantLost(t, "Release with a forged claim", other.Release(ctx, forged))
		_, err := other.Renew(ctx, forged)
		wantLost(t, "Renew with a forged claim", err)
	}
	// The token of another id owns nothing here.
	elsewhere := webhook.Claim{EventID: NewEventID(t), Status: webhook.ClaimAcquired, Token: c.Token}
	wantLost(t, "Release with another id's token", other.Release(ctx, elsewhere))
	_, err := other.Renew(ctx, elsewhere)
	wantLost(t, "Renew with another id's token", err)
	wantLost(t, "Complete without a token of an id nobody holds", other.Complete(ctx, webhook.Claim{EventID: NewEventID(t)}))
	claim(t, other, id, webhook.ClaimInProgress)
	if err := a.Complete(ctx, c); err != nil {
		t.Fatalf("Complete by the owner after forged attempts: %v", err)
	}
	claim(t, other, id, webhook.ClaimDone)
}

// A claim whose owner died lapses; another replica takes it over; the dead
// owner's late Complete and Release change nothing.
func leaseTakeover(t *testing.T, b Backend) {
	const lease = time.Second
	f := b.Stores(t, 2, lease)
	dead, live, ctx := f.Stores[0], f.Stores[1], ctxFor(t)
	id := NewEventID(t)

	before := time.Now()
	old := claim(t, dead, id, webhook.ClaimAcquired)
	if d := old.LeaseExpires.Sub(before); d < lease || d > lease+100*time.Millisecond {
		t.Errorf("LeaseExpires is %v after the claim, want %v", d, lease)
	}
	claim(t, live, id, webhook.ClaimInProgress)
	waitUntil(t, old.LeaseExpires.Add(20*time.Millisecond))

	var taken webhook.Claim
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := live.Claim(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == webhook.ClaimAcquired {
			taken = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lapsed claim was not taken over: %v", c.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if taken.Token == old.Token {
		t.Fatal("the takeover kept the dead owner's token")
	}
	wantLost(t, "late Release by the dead owner", dead.Release(ctx, old))
	_, err := dead.Renew(ctx, old)
	wantLost(t, "late Renew by the dead owner", err)
	claim(t, dead, id, webhook.ClaimInProgress) // still the new owner's
	wantLost(t, "late Complete by the dead owner", dead.Complete(ctx, old))
	claim(t, dead, id, webhook.ClaimInProgress)
	if err := live.Complete(ctx, taken); err != nil {
		t.Fatalf("Complete by the new owner: %v", err)
	}
	claim(t, dead, id, webhook.ClaimDone)
	wantLost(t, "Complete by the dead owner after the new owner's", dead.Complete(ctx, old))
}

// A claim renewed every third of its lease is never taken over, and the
// store keeps it for a lease from each renewal.
func renewKeeps(t *testing.T, b Backend) {
	const lease = 600 * time.Millisecond
	f := b.Stores(t, 2, lease)
	owner, other, ctx := f.Stores[0], f.Stores[1], ctxFor(t)
	id := NewEventID(t)
	c := claim(t, owner, id, webhook.ClaimAcquired)
	var before time.Time
	for range 6 { // three leases
		time.Sleep(lease / 3)
		before = time.Now()
		r, err := owner.Renew(ctx, c)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if d := r.LeaseExpires.Sub(before); d < lease || d > lease+500*time.Millisecond {
			t.Fatalf("renewed LeaseExpires is %v after the renewal, want %v", d, lease)
		}
		if r.Token != c.Token || r.EventID != id {
			t.Fatalf("Renew changed the claim: %+v", r)
		}
		c = r
		// Another replica finds the claim in progress, unless the
		// machine took a lease or more from the renewal to the answer:
		// then the lease lapsed for real and the round tells nothing.
		got, err := other.Claim(ctx, id)
		if err != nil {
			t.Fatalf("Claim(%s): %v", id, err)
		}
		if got.Status != webhook.ClaimInProgress {
			if time.Since(before) >= lease {
				t.Skipf("the machine took %v from a renewal to the next Claim, past the %v lease: too slow to tell", time.Since(before).Round(time.Millisecond), lease)
			}
			t.Fatalf("Claim(%s) = %v %v after a renewal, want in progress", id, got.Status, time.Since(before).Round(time.Millisecond))
		}
	}
	// The stored claim ends a lease after the last renewal: what is left
	// of it plus the time since (however long a loaded machine took to
	// get here) is the lease.
	if ttl, since := f.TTL(id), time.Since(before); ttl > lease || ttl+since < lease-10*time.Millisecond {
		t.Errorf("%v after the last renewal the stored claim lasts %v more, want %v in all", since.Round(time.Millisecond), ttl, lease)
	}
	if err := owner.Complete(ctx, c); err != nil {
		t.Fatal(err)
	}
	claim(t, other, id, webhook.ClaimDone)
}

// A claim that lapsed while nobody took it over still completes: the
// function succeeded, and the store says so (a completion retried after an
// outage longer than the lease).
func lateComplete(t *testing.T, b Backend) {
	const lease = 300 * time.Millisecond
	f := b.Stores(t, 2, lease)
	owner, other, ctx := f.Stores[0], f.Stores[1], ctxFor(t)
	id := NewEventID(t)
	c := claim(t, owner, id, webhook.ClaimAcquired)
	waitUntil(t, c.LeaseExpires.Add(100*time.Millisecond))
	if err := owner.Complete(ctx, c); err != nil {
		t.Fatalf("late Complete of a lapsed claim nobody took: %v, want nil", err)
	}
	claim(t, other, id, webhook.ClaimDone)
	if err := owner.Complete(ctx, c); err != nil {
		t.Errorf("Complete again: %v", err)
	}
}

func retentionExpiry(t *testing.T, b Backend) {
	f := b.Stores(t, 1, 0)
	s, ctx := f.Stores[0], ctxFor(t)
	id := NewEventID(t)
	c := claim(t, s, id, webhook.ClaimAcquired)
	if err := s.Complete(ctx, c); err != nil {
		t.Fatal(err)
	}
	claim(t, s, id, webhook.ClaimDone)
	f.Expire(id)
	// Forgotten: a delivery this late is a new event.
	c2 := claim(t, s, id, webhook.ClaimAcquired)
	wantLost(t, "Complete with the first claim", s.Complete(ctx, c))
	if err := s.Complete(ctx, c2); err != nil {
		t.Fatal(err)
	}
	claim(t, s, id, webhook.ClaimDone)
}

// Of many concurrent claims of one id, from several replicas, one wins.
func oneWinner(t *testing.T, b Backend) {
	f := b.Stores(t, 3, 0)
	for round := 0; round < 5; round++ {
		id := NewEventID(t)
		var (
			mu       sync.Mutex
			acquired int
			wg       sync.WaitGroup
		)
		start := make(chan struct{})
		for i := 0; i < 24; i++ {
			wg.Add(1)
			go func(s webhook.ClaimStore) {
				defer wg.Done()
				<-start
				c, err := s.Claim(context.Background(), id)
				if err != nil {
					t.Error(err)
					return
				}
				if c.Status == webhook.ClaimAcquired {
					mu.Lock()
					acquired++
					mu.Unlock()
				} else if c.Status != webhook.ClaimInProgress {
					t.Errorf("concurrent claim: %v", c.Status)
				}
			}(f.Stores[i%3])
		}
		close(start)
		wg.Wait()
		if acquired != 1 {
			t.Fatalf("round %d: %d claims acquired the id, want 1", round, acquired)
		}
	}
}

func emptyID(t *testing.T, b Backend) {
	s := b.Stores(t, 1, 0).Stores[0]
	if c, err := s.Claim(ctxFor(t), ""); err == nil {
		t.Fatalf("Claim(\"\") = %+v, want an error", c)
	}
}

// waitUntil sleeps until the local clock passes at.
func waitUntil(t *testing.T, at time.Time) {
	t.Helper()
	time.Sleep(time.Until(at))
}
