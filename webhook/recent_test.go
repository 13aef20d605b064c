package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// countingStore counts the claims that reach it, and fails them all while
// down is set.
type countingStore struct {
	webhook.MemoryClaimStore
	mu     sync.Mutex
	claims map[string]int
	down   bool
}

func (s *countingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	s.mu.Lock()
	if s.claims == nil {
		s.claims = map[string]int{}
	}
	s.claims[id]++
	down := s.down
	s.mu.Unlock()
	if down {
		return webhook.Claim{}, errors.New("connection refused")
	}
	return s.MemoryClaimStore.Claim(ctx, id)
}

func (s *countingStore) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims[id]
}

func (s *countingStore) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func eventBody(n int) (string, []byte) {
	id := fmt.Sprintf("6a1f3c2e-9b4d-4e8a-b7c6-%012d", n)
	return id, whEventJSON(id, payments.EventPaymentCompleted, `{"id":"p-1"}`)
}

// A handler answers the duplicate of an event it processed, or that its
// store said was processed, without asking the store: also while the store
// is down. A failed event is not remembered.
func TestRecentlyDoneAnswersWithoutTheStore(t *testing.T) {
	var rec whRecorder
	store := &countingStore{}
	h := whHandler(t, rec.fn(func(n int64) error {
		if n == 2 {
			return errors.New("ledger down")
		}
		return nil
	}), webhook.WithClaimStore(store))
	a, bodyA := eventBody(1)
	b, bodyB := eventBody(2)
	deliver := func(body []byte) int { return whServe(h, whDelivery(body, whNow, whSecret)).Code }

	assert.Equal(t, http.StatusOK, deliver(bodyA))
	assert.Equal(t, http.StatusOK, deliver(bodyA), "a duplicate")
	assert.Equal(t, 1, store.count(a), "the duplicate was answered from memory")

	assert.Equal(t, http.StatusInternalServerError, deliver(bodyB), "the function failed")
	assert.Equal(t, http.StatusOK, deliver(bodyB), "delivered again: processed")
	assert.Equal(t, 2, store.count(b), "a failed event is not remembered")
	assert.EqualValues(t, 3, rec.calls.Load())

	store.setDown(true)
	assert.Equal(t, http.StatusOK, deliver(bodyA), "remembered: answered while the store is down")
	assert.Equal(t, http.StatusOK, deliver(bodyB))
	_, bodyC := eventBody(3)
	assert.Equal(t, http.StatusServiceUnavailable, deliver(bodyC), "an event it never saw needs the store")
	assert.EqualValues(t, 3, rec.calls.Load())

	// Another replica on the same store learns from the store that the
	// event is done, once.
	store.setDown(false)
	replica := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
	for range 3 {
		assert.Equal(t, http.StatusOK, whServe(replica, whDelivery(bodyA, whNow, whSecret)).Code)
	}
	assert.Equal(t, 2, store.count(a), "the replica asked the store once")
	assert.EqualValues(t, 3, rec.calls.Load())
}

// The handler remembers the last n events; WithRecentlyDone(0) remembers
// none.
func TestRecentlyDoneForgetsTheOldest(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		want []int // claims of events 1, 2, 3 that reach the store
	}{
		{"two remembered", 2, []int{2, 1, 1}},
		{"none remembered", 0, []int{2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec whRecorder
			store := &countingStore{}
			h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithRecentlyDone(tc.size))
			var ids []string
			for n := 1; n <= 3; n++ {
				id, body := eventBody(n)
				ids = append(ids, id)
				assert.Equal(t, http.StatusOK, whServe(h, whDelivery(body, whNow, whSecret)).Code)
			}
			for n := 3; n >= 1; n-- { // newest first: 1 was forgotten for 3
				_, body := eventBody(n)
				assert.Equal(t, http.StatusOK, whServe(h, whDelivery(body, whNow, whSecret)).Code, "a duplicate")
			}
			for i, id := range ids {
				assert.Equal(t, tc.want[i], store.count(id), "claims of event %d", i+1)
			}
			assert.EqualValues(t, 3, rec.calls.Load(), "each event processed once")
		})
	}
}

// A delivery of an event that a delivery of the same handler is
// processing waits for it without asking the store: 200 once it
// succeeded, 409 when the claim wait ends first; if it failed, the waiting
// delivery claims the event and processes it.
func TestRecentlyDoneWaitsForItsOwnDelivery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wait      time.Duration
		firstFail bool
		want      int // the second delivery's answer
		claims    int // claims that reached the store
		calls     int64
	}{
		{"the first succeeds", time.Minute, false, http.StatusOK, 1, 1},
		{"the claim wait ends first", 20 * time.Millisecond, false, http.StatusConflict, 1, 1},
		{"no claim wait", 0, false, http.StatusConflict, 1, 1},
		{"the first fails", time.Minute, true, http.StatusOK, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &countingStore{}
			entered, release := make(chan struct{}, 2), make(chan struct{})
			var calls atomic.Int64
			h := whHandler(t, func(context.Context, *payments.Event) error {
				n := calls.Add(1)
				entered <- struct{}{}
				if n == 1 {
					<-release
					if tc.firstFail {
						return errors.New("ledger down")
					}
				}
				return nil
			}, webhook.WithClaimStore(store), webhook.WithClaimWait(tc.wait))
			id, body := eventBody(7)
			first := make(chan int, 1)
			go func() { first <- whServe(h, whDelivery(body, whNow, whSecret)).Code }()
			<-entered
			second := make(chan int, 1)
			go func() { second <- whServe(h, whDelivery(body, whNow, whSecret)).Code }()
			if tc.want == http.StatusConflict {
				assert.Equal(t, http.StatusConflict, <-second)
				close(release)
			} else {
				close(release)
				assert.Equal(t, tc.want, <-second)
			}
			wantFirst := http.StatusOK
			if tc.firstFail {
				wantFirst = http.StatusInternalServerError
			}
			assert.Equal(t, wantFirst, <-first)
			assert.Equal(t, tc.claims, store.count(id), "claims that reached the store")
			assert.Equal(t, tc.calls, calls.Load(), "calls of the function")
		})
	}
}

// busyStore answers every claim in progress while busy is set, as when
// another replica holds the event.
type busyStore struct {
	webhook.MemoryClaimStore
	busy atomic.Bool
}

func (s *busyStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	if s.busy.Load() {
		return webhook.Claim{EventID: id, Status: webhook.ClaimInProgress}, nil
	}
	return s.MemoryClaimStore.Claim(ctx, id)
}

// A delivery that waited in memory for its own handler's delivery, which
// then failed, waits for another replica's claim only for what is left of
// the claim wait: one claim wait in all, not two.
func TestRecentlyDoneWaitIsPartOfTheClaimWait(t *testing.T) {
	const wait = 2 * time.Second
	store := &busyStore{}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var calls atomic.Int64
	h := whHandler(t, func(context.Context, *payments.Event) error {
		if calls.Add(1) == 1 {
			entered <- struct{}{}
			<-release
		}
		return errors.New("ledger down")
	}, webhook.WithClaimStore(store), webhook.WithClaimWait(wait))
	_, body := eventBody(8)
	first := make(chan int, 1)
	go func() { first <- whServe(h, whDelivery(body, whNow, whSecret)).Code }()
	<-entered
	store.busy.Store(true) // from now on another replica holds the event
	start := time.Now()
	second := make(chan int, 1)
	go func() { second <- whServe(h, whDelivery(body, whNow, whSecret)).Code }()
	time.Sleep(wait * 3 / 4) // the second waits in memory meanwhile
	close(release)
	assert.Equal(t, http.StatusInternalServerError, <-first)
	assert.Equal(t, http.StatusConflict, <-second)
	// Two claim waits would take 3.5 s; one takes 2 s and a few store calls.
	if elapsed := time.Since(start); elapsed >= wait+time.Second {
		t.Errorf("the second delivery answered after %v, more than one claim wait (%v) and a second", elapsed, wait)
	}
	assert.EqualValues(t, 1, calls.Load(), "the second never ran the function")
}
