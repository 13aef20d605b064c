package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// A frozen Redis (SIGSTOP: connections open, nothing answers) bounds every
// store call by the store's timeout (DefaultTimeout, 2 s), with a context
// that has no deadline, on a client that keeps deadlines
// (ContextTimeoutEnabled) and on one that does not: Claim (also the first
// of a store, which reads the server's version), Renew, Complete and
// Release each return an error, and a delivery is answered 503 without
// running the function. The bound checked is storetest.HungBound (5 s).
func TestFrozenRedis(t *testing.T) {
	t.Parallel()
	for name, tune := range map[string]func(*redis.Options){"recommended": recommended, "default": nil} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			frozenRedis(t, tune)
		})
	}
}

func frozenRedis(t *testing.T, tune func(*redis.Options)) {
	srv := testservers.StartRedis(t, false)
	newStore := func() *redisstore.ClaimStore {
		s, err := redisstore.NewClaimStore(newClientWith(t, srv.URL(), 8, tune))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, fresh := newStore(), newStore()
	ctx := context.Background()
	held := make([]webhook.Claim, 3)
	for i := range held {
		c, err := s.Claim(ctx, storetest.NewEventID(t))
		if err != nil || c.Status != webhook.ClaimAcquired {
			t.Fatalf("Claim before the freeze = %v, %v", c.Status, err)
		}
		held[i] = c
	}
	var calls atomic.Int32
	h := webhook.NewHandler(storetest.Verifier(t), func(context.Context, *payments.Event) error {
		calls.Add(1)
		return nil
	}, webhook.WithClaimStore(s))

	srv.Freeze(t)
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			srv.Thaw(t)
		}
	}
	defer thaw()
	// Each returns whether it failed, as it must, and what it returned.
	failed := func(err error) (bool, string) { return err != nil, fmt.Sprint(err) }
	ops := map[string]func() (bool, string){
		"Claim":       func() (bool, string) { _, err := s.Claim(ctx, storetest.NewEventID(t)); return failed(err) },
		"first Claim": func() (bool, string) { _, err := fresh.Claim(ctx, storetest.NewEventID(t)); return failed(err) },
		"Renew":       func() (bool, string) { _, err := s.Renew(ctx, held[0]); return failed(err) },
		"Complete":    func() (bool, string) { return failed(s.Complete(ctx, held[1])) },
		"Release":     func() (bool, string) { return failed(s.Release(ctx, held[2])) },
		"a delivery": func() (bool, string) {
			code := storetest.Deliver(h, storetest.EventBody(storetest.NewEventID(t)))
			return code == http.StatusServiceUnavailable, fmt.Sprintf("answered %d", code)
		},
	}
	var wg sync.WaitGroup
	for name, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			type result struct {
				failed bool
				got    string
			}
			done := make(chan result, 1)
			go func() {
				f, got := op()
				done <- result{f, got}
			}()
			select {
			case r := <-done:
				took := time.Since(start).Round(time.Millisecond)
				t.Logf("%s on a frozen Redis: %s after %v", name, r.got, took)
				if !r.failed || took > storetest.HungBound {
					t.Errorf("%s on a frozen Redis: %s after %v; want an error (a delivery: 503) within %v", name, r.got, took, storetest.HungBound)
				}
			case <-time.After(storetest.HungBound + 20*time.Second):
				t.Errorf("%s on a frozen Redis had not returned after %v", name, storetest.HungBound+20*time.Second)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 0 {
		t.Errorf("the function ran %d times on a frozen Redis, want 0", n)
	}
	// Thawed, the store works again.
	thaw()
	if _, err := s.Renew(testCtx(t), held[0]); err != nil {
		t.Errorf("Renew after the thaw: %v", err)
	}
}
