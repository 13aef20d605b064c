package storetest

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// HungBound is how long a handler with its default settings may take to
// answer when the database hangs: its store timeout
// (webhook.DefaultClaimStoreTimeout, 2s) and a generous margin for a loaded
// machine.
const HungBound = 5 * time.Second

// timedDelivery is the outcome of a delivery made by DeliverWithin.
type timedDelivery struct {
	code     int
	took     time.Duration
	returned bool
}

// DeliverWithin delivers body to h and waits at most limit for ServeHTTP to
// return. When it has not, returned is false and the delivery goes on in
// the background.
func DeliverWithin(h http.Handler, body []byte, limit time.Duration) (code int, took time.Duration, returned bool) {
	done := make(chan timedDelivery, 1)
	start := time.Now()
	go func() {
		c := Deliver(h, body)
		done <- timedDelivery{code: c, took: time.Since(start), returned: true}
	}()
	select {
	case d := <-done:
		return d.code, d.took, true
	case <-time.After(limit):
		return 0, time.Since(start), false
	}
}

// HungStore puts the database behind a proxy that silently holds every
// byte (a network partition, or a frozen host), during a Claim and during a
// Complete. ServeHTTP must return within HungBound: 503 for the claim,
// without running the function; 200 for the completion, since the event
// was processed. Once the network heals, the completion lands and a
// redelivery is a duplicate.
func HungStore(t *testing.T, b Backend) {
	t.Run("Claim", func(t *testing.T) { t.Parallel(); hungClaim(t, b) })
	t.Run("Complete", func(t *testing.T) { t.Parallel(); hungComplete(t, b) })
	t.Run("DirectCalls", func(t *testing.T) { t.Parallel(); hungDirect(t, b) })
}

// hungDirect: a program that calls the store itself, with a context that
// has no deadline, still gets an error within the store's own timeout
// (DefaultTimeout, 2 s) from each method.
func hungDirect(t *testing.T, b Backend) {
	f, proxy := b.Proxied(t, 1, 0)
	s := f.Stores[0]
	ctx := context.Background()
	c, err := s.Claim(ctx, NewEventID(t))
	if err != nil || c.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim before the partition: %v, %v", c.Status, err)
	}
	proxy.Freeze()
	defer proxy.Thaw()
	for name, call := range map[string]func() error{
		"Claim":    func() error { _, err := s.Claim(ctx, NewEventID(t)); return err },
		"Renew":    func() error { _, err := s.Renew(ctx, c); return err },
		"Complete": func() error { return s.Complete(ctx, c) },
		"Release":  func() error { return s.Release(ctx, c) },
	} {
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- call() }()
		select {
		case err := <-done:
			if took := time.Since(start); err == nil || took > HungBound {
				t.Errorf("%s on a hung database: %v after %v; want an error within %v", name, err, took.Round(time.Millisecond), HungBound)
			}
		case <-time.After(HungBound + 10*time.Second):
			t.Errorf("%s on a hung database had not returned after %v", name, HungBound+10*time.Second)
		}
	}
}

func hungClaim(t *testing.T, b Backend) {
	f, proxy := b.Proxied(t, 1, 0)
	var calls atomic.Int64
	h := webhook.NewHandler(Verifier(t), func(context.Context, *payments.Event) error {
		calls.Add(1)
		return nil
	}, webhook.WithClaimStore(f.Stores[0]))
	if code := Deliver(h, EventBody(NewEventID(t))); code != http.StatusOK {
		t.Fatalf("a delivery before the partition: %d", code)
	}
	body := EventBody(NewEventID(t))
	proxy.Freeze()
	code, took, returned := DeliverWithin(h, body, HungBound+10*time.Second)
	proxy.Thaw()
	switch {
	case !returned:
		t.Fatalf("ServeHTTP had not returned %v after the database hung during Claim", took.Round(time.Millisecond))
	case code != http.StatusServiceUnavailable || took > HungBound:
		t.Fatalf("a delivery while the database hangs: %d after %v; want 503 within %v", code, took.Round(time.Millisecond), HungBound)
	case calls.Load() != 1:
		t.Fatalf("the function ran %d times, want 1 (the delivery before the partition)", calls.Load())
	}
	var answers Answers
	if err := Retry(context.Background(), func() http.Handler { return h }, body, &answers, 100*time.Millisecond, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 {
		t.Errorf("the function ran %d times, want 2: the refused event once it healed", calls.Load())
	}
}

func hungComplete(t *testing.T, b Backend) {
	f, proxy := b.Proxied(t, 2, 0)
	var calls atomic.Int64
	freezeIn := func(_ context.Context, ev *payments.Event) error {
		calls.Add(1)
		proxy.Freeze() // the network goes while the function finishes
		return nil
	}
	h := webhook.NewHandler(Verifier(t), freezeIn, webhook.WithClaimStore(f.Stores[0]))
	id := NewEventID(t)
	body := EventBody(id)
	code, took, returned := DeliverWithin(h, body, HungBound+30*time.Second)
	proxy.Thaw()
	switch {
	case !returned:
		t.Fatalf("ServeHTTP had not returned %v after the database hung during Complete", took.Round(time.Millisecond))
	case code != http.StatusOK || took > HungBound:
		t.Fatalf("a processed event while the database hangs: %d after %v; want 200 within %v", code, took.Round(time.Millisecond), HungBound)
	}
	// Healed: the completion lands, and the event is a duplicate for
	// another replica.
	other := webhook.NewHandler(Verifier(t), func(context.Context, *payments.Event) error {
		calls.Add(1)
		return nil
	}, webhook.WithClaimStore(f.Stores[1]))
	deadline := time.Now().Add(30 * time.Second)
	for {
		code := Deliver(other, body)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the network healed, redeliveries were still answered %d", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the function ran %d times, want 1", n)
	}
}
