package pgstore_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// frozenBound is how long a delivery may take to be answered while the
// database is frozen: pgstore.DefaultTimeout (the handler's store timeout
// is the same) for the one statement that hangs; for a transaction in
// flight, the watch's first ping (a third of the lease) and its timeout;
// with room for a loaded machine. Answers come from timers, not from work.
const frozenBound = pgstore.DefaultLease/3 + 2*pgstore.DefaultTimeout + 2*time.Second

// arrivingBound is the same for a delivery that arrives while the database
// is frozen, which the package documentation promises a 503 within one
// WithTimeout: the one statement that hangs, with 1.5 s for a loaded
// machine to run the timer's goroutine.
const arrivingBound = pgstore.DefaultTimeout + 1500*time.Millisecond

// A frozen PostgreSQL (SIGSTOP: connections stay open, nothing answers):
// deliveries get 503 within arrivingBound when they arrive while it is
// frozen; one it froze under gets 200 (processed; the completion is
// retried in the background), never 500; once it is thawed each event is
// processed once. The Queue's: TestQueueFrozenDatabase.
func TestFrozenDatabase(t *testing.T) {
	t.Parallel()
	srv := testservers.StartPostgres(t)
	pool := newPool(t, srv.URL(), 8)
	s, _ := newStore(t, pool)
	var calls atomic.Int64
	var freezeAfterClaim atomic.Bool
	freeze := func() {
		if freezeAfterClaim.CompareAndSwap(true, false) {
			srv.Freeze(t)
		}
	}
	modes := map[string]webhook.EventFunc{
		"default": func(context.Context, *payments.Event) error { calls.Add(1); return nil },
	}
	for name, fn := range modes {
		var store webhook.ClaimStore = s
		if name == "default" {
			store = &freezeOnClaim{ClaimStore: s, freeze: freeze}
		}
		h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithClaimStore(store))
		warm := storetest.EventBody(storetest.NewEventID(t))
		if code := storetest.Deliver(h, warm); code != http.StatusOK {
			t.Fatalf("%s: a delivery before the freeze: %d", name, code)
		}
		before := calls.Load()

		arriving := storetest.EventBody(storetest.NewEventID(t))
		srv.Freeze(t)
		code, took, returned := storetest.DeliverWithin(h, arriving, frozenBound+10*time.Second)
		srv.Thaw(t)
		t.Logf("%s: arriving while frozen: %d after %v", name, code, took.Round(time.Millisecond))
		if !returned || code != http.StatusServiceUnavailable || took > arrivingBound {
			t.Errorf("%s: a delivery while frozen: %d after %v (returned: %v); want 503 within %v", name, code, took.Round(time.Millisecond), returned, arrivingBound)
		}

		// Claimed, then the server freezes before the completion.
		claimed := storetest.EventBody(storetest.NewEventID(t))
		freezeAfterClaim.Store(true)
		code, took, returned = storetest.DeliverWithin(h, claimed, frozenBound+10*time.Second)
		srv.Thaw(t)
		t.Logf("%s: frozen after its claim: %d after %v", name, code, took.Round(time.Millisecond))
		want := http.StatusServiceUnavailable
		if name == "default" {
			want = http.StatusOK // processed; the completion is retried in the background
		}
		if !returned || took > frozenBound || code != want {
			t.Errorf("%s: a delivery frozen after its claim: %d after %v (returned: %v); want %d within %v", name, code, took.Round(time.Millisecond), returned, want, frozenBound)
		}
		for _, body := range [][]byte{arriving, claimed} {
			var answers storetest.Answers
			if err := storetest.Retry(context.Background(), func() http.Handler { return h }, body, &answers, 100*time.Millisecond, 30*time.Second); err != nil {
				t.Fatalf("%s: after the thaw: %v", name, err)
			}
		}
		want = 2
		if n := calls.Load() - before; n != int64(want) {
			t.Errorf("%s: %d calls for the two events, want %d", name, n, want)
		}
	}
}

// freezeOnClaim calls freeze after every successful Claim.
type freezeOnClaim struct {
	webhook.ClaimStore
	freeze func()
}

func (s *freezeOnClaim) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	c, err := s.ClaimStore.Claim(ctx, id)
	if err == nil {
		s.freeze()
	}
	return c, err
}
