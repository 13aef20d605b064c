package storetest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// errDead is what a killed replica's store calls return: a dead process
// sends nothing to the database.
var errDead = errors.New("storetest: the replica is dead")

// DeadStore is a replica's store that Kill makes behave like the store of
// a process killed with SIGKILL: from then on no call reaches the
// database, so nothing renews, completes or releases the replica's claims.
type DeadStore struct {
	webhook.ClaimStore
	dead atomic.Bool
}

// Kill makes every later call fail without touching the database.
func (s *DeadStore) Kill() { s.dead.Store(true) }

// Revive lets calls through again, as when a partition heals.
func (s *DeadStore) Revive() { s.dead.Store(false) }

// Claim implements webhook.ClaimStore.
func (s *DeadStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	if s.dead.Load() {
		return webhook.Claim{}, errDead
	}
	return s.ClaimStore.Claim(ctx, id)
}

// Complete implements webhook.ClaimStore.
func (s *DeadStore) Complete(ctx context.Context, c webhook.Claim) error {
	if s.dead.Load() {
		return errDead
	}
	return s.ClaimStore.Complete(ctx, c)
}

// Release implements webhook.ClaimStore.
func (s *DeadStore) Release(ctx context.Context, c webhook.Claim) error {
	if s.dead.Load() {
		return errDead
	}
	return s.ClaimStore.Release(ctx, c)
}

// Renew implements webhook.ClaimStore.
func (s *DeadStore) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	if s.dead.Load() {
		return webhook.Claim{}, errDead
	}
	return s.ClaimStore.Renew(ctx, c)
}

// killableStore wraps a replica's store in a DeadStore.
func killableStore(store webhook.ClaimStore) (webhook.ClaimStore, *DeadStore) {
	d := &DeadStore{ClaimStore: store}
	return d, d
}

// Killable serves h until Kill, which drops every connection in flight
// (the sender sees it cut, as with a process killed with SIGKILL) and every
// later one. The handler's goroutines of the requests in flight are left
// behind, as a dead process's threads would be: they answer nobody.
type Killable struct {
	h      http.Handler
	killed chan struct{}
	once   sync.Once
}

// NewKillable wraps h.
func NewKillable(h http.Handler) *Killable {
	return &Killable{h: h, killed: make(chan struct{})}
}

// Kill drops every connection, now and later.
func (k *Killable) Kill() { k.once.Do(func() { close(k.killed) }) }

// ServeHTTP implements http.Handler.
func (k *Killable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.h.ServeHTTP(rec, r)
	}()
	select {
	case <-done:
	case <-k.killed:
		panic(http.ErrAbortHandler) // net/http drops the connection
	}
	select {
	case <-k.killed:
		panic(http.ErrAbortHandler)
	default:
	}
	for name, v := range rec.Header() {
		w.Header()[name] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// KilledReplica: the service (paymentstest, with its default retry
// schedule: 1, 2, 4 and 8 seconds) sends an event to three replicas behind a
// round-robin. Replica A claims it, starts the function, and is killed: the
// sender's connection drops, A's function never returns, and A's store
// never again reaches the database. The sender's retries reach B and C:
// the event must be processed exactly once, before the sender gives up.
func KilledReplica(t *testing.T, b Backend) {
	f := b.Stores(t, 3, 0) // the stores' default lease
	deadStore := &DeadStore{ClaimStore: f.Stores[0]}
	started, never := make(chan struct{}), make(chan struct{})
	defer close(never)
	var startOnce sync.Once
	fnA := func(context.Context, *payments.Event) error {
		startOnce.Do(func() { close(started) })
		<-never // a dead process runs nothing more
		return nil
	}
	ledger := NewLedger()
	fn := func(_ context.Context, ev *payments.Event) error {
		ledger.Call(ev.ID)
		ledger.Succeed(ev.ID)
		return nil
	}
	a := NewKillable(webhook.NewHandler(Verifier(t), fnA, webhook.WithClaimStore(deadStore)))
	others := []http.Handler{
		webhook.NewHandler(Verifier(t), fn, webhook.WithClaimStore(f.Stores[1])),
		webhook.NewHandler(Verifier(t), fn, webhook.WithClaimStore(f.Stores[2])),
	}
	var attempts atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := attempts.Add(1)
		if n == 1 {
			a.ServeHTTP(w, r)
			return
		}
		others[n%2].ServeHTTP(w, r)
	}))
	defer front.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: front.URL + "/webhooks", Secrets: []string{Secret}}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.Client().Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("replica A never started the function")
	}
	deadStore.Kill()
	a.Kill()
	if err := srv.WaitForDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	ds := srv.Deliveries()
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	d := ds[0]
	codes := make([]int, len(d.Attempts))
	for i, at := range d.Attempts {
		codes[i] = at.StatusCode
	}
	t.Logf("the sender's attempts were answered %v (0: connection dropped)", codes)
	if n := ledger.Successes(d.EventID); n != 1 || d.Status != paymentstest.DeliveryDelivered {
		t.Errorf("the event was processed %d times by the live replicas and its delivery is %s; want once, delivered", n, d.Status)
	}
}
