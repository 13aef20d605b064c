package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// ReplicaConfig shapes a Replicas run.
type ReplicaConfig struct {
	Replicas, Events, Senders int
	// FailOneIn makes about one call of the function in this many fail
	// (0: none), so that claims are released and taken again.
	FailOneIn int
}

// DefaultReplicaConfig: three replicas, 500 events, 16 senders, a tenth of
// the calls failing.
var DefaultReplicaConfig = ReplicaConfig{Replicas: 3, Events: 500, Senders: 16, FailOneIn: 10}

// Replicas delivers cfg.Events distinct events, each 2 to 4 times, out of
// order and concurrently, to handlers on cfg.Replicas stores over one
// namespace, through a round-robin of the replicas; a sender retries each
// delivery that is not answered 200, as the service does. Each event's
// function must succeed exactly once, and no store operation may fail.
func Replicas(t *testing.T, b Backend, cfg ReplicaConfig) {
	f := b.Stores(t, cfg.Replicas, 0)
	ledger := NewLedger()
	logs := &Logs{}
	errFailed := errors.New("injected failure")
	fn := func(_ context.Context, ev *payments.Event) error {
		ledger.Call(ev.ID)
		fail := cfg.FailOneIn > 0 && rand.IntN(cfg.FailOneIn) == 0
		// Widen the window in which duplicates collide.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		if fail {
			return errFailed
		}
		ledger.Succeed(ev.ID)
		return nil
	}
	handlers := make([]http.Handler, cfg.Replicas)
	var met atomic.Int64 // claims that met another in progress
	for i, s := range f.Stores {
		handlers[i] = webhook.NewHandler(Verifier(t), fn,
			webhook.WithClaimStore(&countingStore{ClaimStore: s, inProgress: &met}), webhook.WithLogger(logs.Logger()))
	}
	ids := make([]string, cfg.Events)
	for i := range ids {
		ids[i] = NewEventID(t)
	}
	stats := DeliverAll(t, handlers, ids, cfg.Senders)

	for _, id := range ids {
		if n := ledger.Successes(id); n != 1 {
			t.Errorf("event %s succeeded %d times (called %d times), want once", id, n, ledger.Calls(id))
		}
	}
	if n := ledger.TotalSuccesses(); n != len(ids) {
		t.Errorf("%d successes, want %d", n, len(ids))
	}
	if cfg.FailOneIn > 0 && stats.Count(http.StatusInternalServerError) == 0 {
		t.Error("no function call failed: the run did not exercise Release")
	}
	if met.Load() == 0 {
		t.Error("no delivery met another in progress: the run did not exercise concurrent claims")
	}
	for _, msg := range []string{"event processed but not recorded", "could not release", "webhook refused: claim store"} {
		if r := logs.Records(t, msg); len(r) > 0 {
			t.Errorf("%d log records %q, first: %v", len(r), msg, r[0])
		}
	}
	// Every event is now remembered as done by every replica.
	for _, id := range ids[:20] {
		for _, s := range f.Stores {
			c, err := s.Claim(context.Background(), id)
			if err != nil || c.Status != webhook.ClaimDone {
				t.Fatalf("Claim(%s) after the run = %v, %v; want done", id, c.Status, err)
			}
		}
	}
}

// countingStore counts the claims that found their event in progress.
type countingStore struct {
	webhook.ClaimStore
	inProgress *atomic.Int64
}

func (s *countingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	c, err := s.ClaimStore.Claim(ctx, id)
	if err == nil && c.Status == webhook.ClaimInProgress {
		s.inProgress.Add(1)
	}
	return c, err
}

// DeliverAll delivers 2 to 4 copies of each event, out of order, from
// senders concurrent senders, each to the next of handlers in a
// round-robin, retrying every delivery until it is answered 200. It returns
// how many times each status was answered.
func DeliverAll(t *testing.T, handlers []http.Handler, ids []string, senders int) *Answers {
	seed := uint64(time.Now().UnixNano())
	t.Logf("delivery order seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var rr atomic.Uint64
	next := func() http.Handler { return handlers[rr.Add(1)%uint64(len(handlers))] }
	bodies := deliveries(rng, ids)
	var (
		answers Answers
		wg      sync.WaitGroup
		nextIdx atomic.Int64
	)
	start := time.Now()
	for w := 0; w < senders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(nextIdx.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				if err := Retry(context.Background(), next, bodies[i], &answers, 50*time.Millisecond, 30*time.Second); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d deliveries of %d events to %d replicas in %v; answers: %v",
		len(bodies), len(ids), len(handlers), time.Since(start).Round(time.Millisecond), answers.String())
	return &answers
}

// deliveries returns 2 to 4 copies of each event's body, shuffled within
// windows of 16 events so that copies of one event are in flight together.
func deliveries(rng *rand.Rand, ids []string) [][]byte {
	const window = 16
	var out [][]byte
	for lo := 0; lo < len(ids); lo += window {
		var chunk [][]byte
		for _, id := range ids[lo:min(lo+window, len(ids))] {
			body := EventBody(id)
			for n := 2 + rng.IntN(3); n > 0; n-- {
				chunk = append(chunk, body)
			}
		}
		rng.Shuffle(len(chunk), func(i, j int) { chunk[i], chunk[j] = chunk[j], chunk[i] })
		out = append(out, chunk...)
	}
	return out
}
