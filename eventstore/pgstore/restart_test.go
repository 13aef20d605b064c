package pgstore_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// renewals counts a store's renewals that failed and that succeeded.
type renewals struct {
	webhook.ClaimStore
	failed, succeeded atomic.Int64
}

func (r *renewals) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	c, err := r.ClaimStore.Renew(ctx, c)
	if err != nil {
		r.failed.Add(1)
	} else {
		r.succeeded.Add(1)
	}
	return c, err
}

// A claim rides out a PostgreSQL restart shorter than its lease: the
// renewals fail while the server is down (connections refused, then the
// pool's broken connections are dropped), succeed again on new
// connections once it is back, and the function, never cancelled,
// completes its event, with no lease lost or run out in the log.
func TestLeaseRidesOutARestart(t *testing.T) {
	t.Parallel()
	// A renewal every 5 s: a restart has 10 s (it takes about one) from
	// the first failed renewal before the lease would run out.
	const lease = 15 * time.Second
	srv := testservers.StartPostgres(t)
	f := fixture(t, srv.URL(), 1, lease, 4)
	store := &renewals{ClaimStore: f.Stores[0]}
	started, finish := make(chan struct{}), make(chan struct{})
	var cancelled atomic.Bool
	logs := &storetest.Logs{}
	h := webhook.NewHandler(storetest.Verifier(t), func(ctx context.Context, ev *payments.Event) error {
		close(started)
		select {
		case <-finish:
			return nil
		case <-ctx.Done():
			cancelled.Store(true)
			return context.Cause(ctx)
		}
	}, webhook.WithClaimStore(store), webhook.WithLogger(logs.Logger()))
	id := storetest.NewEventID(t)
	answer := make(chan int, 1)
	go func() { answer <- storetest.Deliver(h, storetest.EventBody(id)) }()
	<-started
	srv.Stop(t)
	waitUntil(t, "a renewal failed while the server is down", 30*time.Second, func() bool { return store.failed.Load() > 0 })
	srv.Start(t)
	ok := store.succeeded.Load()
	waitUntil(t, "a renewal succeeded after the restart", 30*time.Second, func() bool { return store.succeeded.Load() > ok })
	close(finish)
	if code := <-answer; code != http.StatusOK || cancelled.Load() {
		t.Fatalf("the delivery: %d (function cancelled: %v), want 200\n%s", code, cancelled.Load(), logs.String())
	}
	for _, msg := range []string{"claim lost", "lease ran out", "not recorded"} {
		if r := logs.Records(t, msg); len(r) > 0 {
			t.Errorf("logged %q: %v", msg, r[0])
		}
	}
	if c, err := f.Stores[0].Claim(testCtx(t), id); err != nil || c.Status != webhook.ClaimDone {
		t.Errorf("after the restart: %v, %v; want done", c.Status, err)
	}
}

// waitUntil polls cond until it holds, and fails the test after limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}
