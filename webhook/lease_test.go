package webhook_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// whScriptedStore is a MemoryClaimStore whose calls can be made to fail or to
// hang until their context ends, and which counts them.
type whScriptedStore struct {
	webhook.MemoryClaimStore
	mu                      sync.Mutex
	claimFn, renewFn        func(ctx context.Context) error // nil: pass through
	completeFn, releaseFn   func(ctx context.Context) error
	renews, completes, rels atomic.Int32
}

// whHang blocks until ctx ends, as a call to a database that hangs.
func whHang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (s *whScriptedStore) script(f *func(context.Context) error, fn func(context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*f = fn
}

func (s *whScriptedStore) get(f *func(context.Context) error) func(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *f
}

func (s *whScriptedStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	if f := s.get(&s.claimFn); f != nil {
		if err := f(ctx); err != nil {
			return webhook.Claim{}, err
		}
	}
	return s.MemoryClaimStore.Claim(ctx, id)
}

func (s *whScriptedStore) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	s.renews.Add(1)
	if f := s.get(&s.renewFn); f != nil {
		if err := f(ctx); err != nil {
			return c, err
		}
	}
	return s.MemoryClaimStore.Renew(ctx, c)
}

func (s *whScriptedStore) Complete(ctx context.Context, c webhook.Claim) error {
	s.completes.Add(1)
	if f := s.get(&s.completeFn); f != nil {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return s.MemoryClaimStore.Complete(ctx, c)
}

func (s *whScriptedStore) Release(ctx context.Context, c webhook.Claim) error {
	s.rels.Add(1)
	if f := s.get(&s.releaseFn); f != nil {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return s.MemoryClaimStore.Release(ctx, c)
}

func whLeasedStore(lease time.Duration) *whScriptedStore {
	s := &whScriptedStore{}
	webhook.WithMemoryLease(lease)(&s.MemoryClaimStore)
	return s
}

// A function that runs for ten renewals (over three leases) keeps its
// claim: the handler renews it, another replica's deliveries are refused
// meanwhile, and the function's context is never cancelled. The handler and
// the store run on a fake clock that moves a third of the lease at a time,
// once the previous renewal has landed, so no renewal is late however slow
// the machine (it failed 7 of 15 runs on wall-clock time at a high load).
func TestHandlerRenewsTheClaimWhileTheFunctionRuns(t *testing.T) {
	const lease = 200 * time.Millisecond
	clock := webhook.NewFakeClock(time.Now())
	store := whLeasedStore(lease)
	webhook.WithMemoryClock(clock.Now)(&store.MemoryClaimStore)
	var calls atomic.Int64
	finish := make(chan struct{})
	slow := func(ctx context.Context, _ *payments.Event) error {
		calls.Add(1)
		select {
		case <-finish:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	a := whHandler(t, slow, webhook.WithClaimStore(store))
	b := whHandler(t, slow, webhook.WithClaimStore(store), webhook.WithClaimWait(0))
	webhook.SetClock(a, clock)
	webhook.SetClock(b, clock)
	answer := make(chan int, 1)
	go func() { answer <- whServe(a, whDelivery(whPayload(), whNow, whSecret)).Code }()
	require.Eventually(t, func() bool { return calls.Load() == 1 && clock.Pending() == 1 }, 10*time.Second, time.Millisecond)
	for i := range 10 {
		clock.Advance(lease / 3) // the renewal is due
		require.Eventually(t, func() bool { return store.renews.Load() == int32(i+1) && clock.Pending() == 1 }, 10*time.Second, time.Millisecond,
			"renewal %d and the next one scheduled", i+1)
		assert.Equal(t, http.StatusConflict, whServe(b, whDelivery(whPayload(), whNow, whSecret)).Code, "the live replica's claim holds past its first lease")
	}
	close(finish)
	assert.Equal(t, http.StatusOK, <-answer, "the slow function was not cancelled")
	assert.EqualValues(t, 1, calls.Load(), "never started a second time")
	assert.EqualValues(t, 10, store.renews.Load(), "renewed every third of the lease")
}

// The first renewal is timed from when the Claim was sent: a Claim whose
// answer took half the lease does not leave the lease to reach its safety
// margin (a fifth of it) before the renewal, which would cancel the
// function. Timed from the answer, the renewal would come at 5/6 of the
// lease, past the margin.
func TestHandlerTimesTheFirstRenewalFromTheClaimSent(t *testing.T) {
	const lease = 1200 * time.Millisecond
	scripted := whLeasedStore(lease)
	// The claim is granted at once, its answer arrives late (within the
	// store timeout).
	store := whSlowClaimAnswer{scripted, lease / 2}
	slow := func(ctx context.Context, _ *payments.Event) error {
		select {
		case <-time.After(lease):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	h := whHandler(t, slow, webhook.WithClaimStore(store))
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "the function kept its claim")
	assert.Positive(t, scripted.renews.Load())
}

// whSlowClaimAnswer answers each Claim delay after the store granted it.
type whSlowClaimAnswer struct {
	*whScriptedStore
	delay time.Duration
}

func (s whSlowClaimAnswer) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	c, err := s.whScriptedStore.Claim(ctx, id)
	time.Sleep(s.delay)
	return c, err
}

// A quick function costs no renewal: the first comes a third of the lease
// after the claim.
func TestHandlerQuickFunctionIsNotRenewed(t *testing.T) {
	store := whLeasedStore(3 * time.Second)
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
	for i := range 20 {
		payload := whEventJSON("evt-quick-"+string(rune('a'+i)), payments.EventPaymentCompleted, `{"id":"p"}`)
		require.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow, whSecret)).Code)
	}
	assert.Zero(t, store.renews.Load())
}

// A renewal that finds the claim lost cancels the function's context with
// ErrClaimLost as its cause; renewals that keep failing cancel it when the
// lease runs out, with a cause matching context.DeadlineExceeded. Either way
// the event is answered 500 and released.
func TestHandlerCancelsTheFunctionWhenItsClaimIsGone(t *testing.T) {
	for name, tc := range map[string]struct {
		renew func(context.Context) error
		want  error
	}{
		"renewal finds the claim lost":           {func(context.Context) error { return webhook.ErrClaimLost }, webhook.ErrClaimLost},
		"renewals fail until the lease runs out": {func(context.Context) error { return errors.New("connection refused") }, context.DeadlineExceeded},
		"renewals hang until the lease runs out": {whHang, context.DeadlineExceeded},
	} {
		t.Run(name, func(t *testing.T) {
			const lease = 300 * time.Millisecond
			store := whLeasedStore(lease)
			store.script(&store.renewFn, tc.renew)
			var cause error
			var took time.Duration
			h := whHandler(t, func(ctx context.Context, _ *payments.Event) error {
				start := time.Now()
				select {
				case <-ctx.Done():
					cause, took = context.Cause(ctx), time.Since(start)
					return ctx.Err()
				case <-time.After(10 * time.Second):
					return nil
				}
			}, webhook.WithClaimStore(store))
			assert.Equal(t, http.StatusInternalServerError, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
			assert.ErrorIs(t, cause, tc.want)
			assert.Less(t, took, lease+time.Second, "cancelled by the end of the lease")
			assert.EqualValues(t, 1, store.rels.Load(), "released")
		})
	}
}

// A delivery that meets a live claim waits for it: 200 when the other
// completes, the event processed by it when the other fails, 409 at once
// with WithClaimWait(0).
func TestHandlerWaitsForALiveClaim(t *testing.T) {
	deliverTwice := func(t *testing.T, firstResult error, opts ...webhook.HandlerOption) (first, second int, calls int64) {
		var n atomic.Int64
		entered := make(chan struct{})
		h := whHandler(t, func(context.Context, *payments.Event) error {
			if n.Add(1) == 1 {
				close(entered)
				time.Sleep(150 * time.Millisecond)
				return firstResult
			}
			return nil
		}, opts...)
		answer := make(chan int, 1)
		go func() { answer <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
		<-entered
		second = whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code
		return <-answer, second, n.Load()
	}
	t.Run("the other completes", func(t *testing.T) {
		first, second, calls := deliverTwice(t, nil)
		assert.Equal(t, []int{http.StatusOK, http.StatusOK}, []int{first, second})
		assert.EqualValues(t, 1, calls)
	})
	t.Run("the other fails", func(t *testing.T) {
		first, second, calls := deliverTwice(t, errors.New("boom"))
		assert.Equal(t, []int{http.StatusInternalServerError, http.StatusOK}, []int{first, second}, "the waiting delivery processed it")
		assert.EqualValues(t, 2, calls)
	})
	t.Run("no wait", func(t *testing.T) {
		first, second, calls := deliverTwice(t, nil, webhook.WithClaimWait(0))
		assert.Equal(t, []int{http.StatusOK, http.StatusConflict}, []int{first, second})
		assert.EqualValues(t, 1, calls)
	})
	t.Run("the wait is bounded", func(t *testing.T) {
		store := whLeasedStore(time.Minute)
		_, err := store.Claim(context.Background(), whEventID) // a replica that never finishes
		require.NoError(t, err)
		h := whHandler(t, whRecorderFn(), webhook.WithClaimStore(store), webhook.WithClaimWait(300*time.Millisecond))
		start := time.Now()
		assert.Equal(t, http.StatusConflict, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.WithinRange(t, time.Now(), start.Add(300*time.Millisecond), start.Add(2*time.Second))
	})
}

// A store that hangs costs a 503 within the store timeout for a claim, and
// never holds the answer past it for a completion (200: the event was
// processed) or a release (500).
func TestHandlerStoreCallsHaveDeadlines(t *testing.T) {
	const timeout = 200 * time.Millisecond
	const bound = timeout + 1500*time.Millisecond // generous, for a loaded machine
	for name, tc := range map[string]struct {
		hang func(*whScriptedStore)
		fn   func(int64) error
		want int
	}{
		"Claim":    {func(s *whScriptedStore) { s.script(&s.claimFn, whHang) }, whOK, http.StatusServiceUnavailable},
		"Complete": {func(s *whScriptedStore) { s.script(&s.completeFn, whHang) }, whOK, http.StatusOK},
		"Release":  {func(s *whScriptedStore) { s.script(&s.releaseFn, whHang) }, func(int64) error { return errors.New("boom") }, http.StatusInternalServerError},
	} {
		t.Run(name, func(t *testing.T) {
			store := &whScriptedStore{}
			tc.hang(store)
			var rec whRecorder
			h := whHandler(t, rec.fn(tc.fn), webhook.WithClaimStore(store), webhook.WithClaimStoreTimeout(timeout))
			start := time.Now()
			assert.Equal(t, tc.want, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
			assert.Less(t, time.Since(start), bound)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_ = h.Shutdown(ctx) // stop the background retries of a hung Complete
		})
	}
}

// When renewals fail, a function that honours its context (here it stops
// 20 ms after the cancellation) has stopped before the store can hand the
// claim to the next delivery: the handler cancels it a safety margin (a
// fifth of the lease, 200 ms here) before the lease ends, not at the end.
// A claimer polls the store every millisecond, as the next delivery would,
// and looks whether the first function still runs when it takes over.
func TestHandlerStopsTheFunctionBeforeTheStoreGivesItsClaimAway(t *testing.T) {
	const (
		lease    = time.Second
		windDown = 20 * time.Millisecond
	)
	store := whLeasedStore(lease)
	store.script(&store.renewFn, func(context.Context) error { return errors.New("connection refused") })
	var running atomic.Bool
	started := make(chan struct{})
	var cause error
	h := whHandler(t, func(ctx context.Context, _ *payments.Event) error {
		running.Store(true)
		defer running.Store(false)
		close(started)
		<-ctx.Done()
		cause = context.Cause(ctx)
		time.Sleep(windDown) // a prompt, orderly stop
		return ctx.Err()
	}, webhook.WithClaimStore(store))
	answer := make(chan int, 1)
	go func() { answer <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
	<-started
	id := whEventID
	var stillRunning bool
	for {
		c, err := store.MemoryClaimStore.Claim(context.Background(), id)
		require.NoError(t, err)
		if c.Status == webhook.ClaimAcquired {
			stillRunning = running.Load()
			break
		}
		time.Sleep(time.Millisecond)
	}
	assert.False(t, stillRunning, "the first function was still running when the next delivery took the event over")
	assert.Equal(t, http.StatusInternalServerError, <-answer)
	assert.ErrorIs(t, cause, context.DeadlineExceeded)
}

// A lease lost is logged with the event's id: when a renewal finds the
// claim taken over, and when no renewal succeeded before the lease's end.
func TestHandlerLogsALostLeaseWithTheEventID(t *testing.T) {
	for msg, renew := range map[string]func(context.Context) error{
		"claim lost to another delivery while processing; cancelling the function":  func(context.Context) error { return webhook.ErrClaimLost },
		"claim's lease is ending and no renewal succeeded; cancelling the function": func(context.Context) error { return errors.New("connection refused") },
	} {
		store := whLeasedStore(300 * time.Millisecond)
		store.script(&store.renewFn, renew)
		logs := new(testlog.Buffer)
		h := whHandler(t, func(ctx context.Context, _ *payments.Event) error {
			<-ctx.Done()
			return ctx.Err()
		}, webhook.WithClaimStore(store), webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
		require.Equal(t, http.StatusInternalServerError, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		lines, err := logs.JSONLines()
		require.NoError(t, err)
		var found int
		for _, l := range lines {
			if l["msg"] == msg {
				found++
				assert.Equal(t, whEventID, l["event_id"], msg)
			}
		}
		assert.Equal(t, 1, found, msg)
	}
}

// In one process, a delivery that waits for another delivery of the same
// event (the default MemoryClaimStore) is woken the moment that one's claim
// settles, and answers 200 without running the function again: it does not
// claim again after pauses (which answered it up to twice as late as the
// delivery it waited for). Its waits run on the handler's fake clock,
// which never moves here: only the settling can end them.
func TestMemoryWaitEndsWhenTheClaimSettles(t *testing.T) {
	t.Parallel()
	clock := webhook.NewFakeClock(time.Now())
	var calls atomic.Int64
	finish := make(chan struct{})
	fn := func(ctx context.Context, _ *payments.Event) error {
		calls.Add(1)
		<-finish
		return nil
	}
	h := whHandler(t, fn)
	webhook.SetClock(h, clock)
	first, second := make(chan int, 1), make(chan int, 1)
	go func() { first <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
	// The first runs the function; its claim's renewal is the clock's one timer.
	require.Eventually(t, func() bool { return calls.Load() == 1 && clock.Pending() == 1 }, 10*time.Second, time.Millisecond)
	go func() { second <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
	// The second waits: for the end of its wait and for the claim's lease.
	require.Eventually(t, func() bool { return clock.Pending() == 3 }, 10*time.Second, time.Millisecond,
		"the second delivery waits on the handler's clock")
	close(finish)
	assert.Equal(t, http.StatusOK, <-first)
	select {
	case code := <-second:
		assert.Equal(t, http.StatusOK, code, "the duplicate is answered as done")
	case <-time.After(time.Minute):
		t.Fatal("the waiting delivery was not woken when the first one's claim settled")
	}
	assert.EqualValues(t, 1, calls.Load(), "the function ran once")
	assert.Zero(t, clock.Pending(), "no wait left behind")
}
