package webhook_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// Shutdown waits for a completion retried in the background: it returns
// nil once the store came back and the completion landed.
func TestHandlerShutdownWaitsForPendingCompletions(t *testing.T) {
	store := &whFailingStore{}
	store.completeFails.Store(true)
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- h.Shutdown(ctx)
	}()
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a completion pending", err)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "no new delivery once shutting down")
	store.completeFails.Store(false)
	require.NoError(t, <-done)
	c, err := store.MemoryClaimStore.Claim(context.Background(), whEventID)
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimDone, c.Status, "recorded before Shutdown returned")
	assert.EqualValues(t, 1, rec.calls.Load())
}

// When the store never comes back, Shutdown gives up at its context's end,
// says how many events were left unrecorded, and logs each one.
func TestHandlerShutdownGivesUpAtItsDeadline(t *testing.T) {
	store := &whFailingStore{}
	store.completeFails.Store(true)
	var logs bytes.Buffer
	h := whHandler(t, whRecorderFn(), webhook.WithClaimStore(store),
		webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "1 processed events not recorded")
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, 1, strings.Count(logs.String(), "not recorded as done when the handler shut down"), logs.String())
	assert.Contains(t, logs.String(), whEventID)
}

// whHangingStore's Complete hangs until its context ends, as on a database
// that holds every packet.
type whHangingStore struct{ webhook.MemoryClaimStore }

func (s *whHangingStore) Complete(ctx context.Context, _ webhook.Claim) error {
	<-ctx.Done()
	return ctx.Err()
}

// With the store hung in a Complete of the background retries, Shutdown
// still returns soon after its context ends: stopping cuts the call in
// flight, not only the wait between calls.
func TestHandlerShutdownCutsAHungStoreCall(t *testing.T) {
	var logs bytes.Buffer
	h := whHandler(t, whRecorderFn(), webhook.WithClaimStore(&whHangingStore{}), webhook.WithClaimStoreTimeout(time.Second),
		webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	// The delivery's Complete hangs for its 1 s timeout, then the
	// background retries start; after 100 ms one is inside Complete.
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 600*time.Millisecond, "Shutdown waited for the store call past its context")
	assert.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "not recorded as done when the handler shut down")
	}, time.Second, 10*time.Millisecond)
}

// A Complete that finds the claim lost (the function ran past its lease
// and another delivery took the event) is logged as such; the handler then
// claims the event again: once the other delivery completes it, nothing is
// left pending.
func TestHandlerCompleteAfterTheClaimWasLost(t *testing.T) {
	store := webhook.NewMemoryClaimStore(0)
	var other webhook.Claim
	takeover := func(ctx context.Context, _ *payments.Event) error {
		// Another replica took the event over while the function ran.
		mine, _ := webhook.ClaimFromContext(ctx)
		if err := store.Release(ctx, mine); err != nil {
			return err
		}
		var err error
		other, err = store.Claim(ctx, mine.EventID)
		return err
	}
	var logs bytes.Buffer
	h := whHandler(t, takeover, webhook.WithClaimStore(store),
		webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	assert.Contains(t, logs.String(), "its claim was lost to another delivery")
	require.NoError(t, store.Complete(context.Background(), other))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, h.Shutdown(ctx))
	assert.Contains(t, logs.String(), "found recorded as done by another delivery")
}

func TestHandlerShutdownWithNothingPending(t *testing.T) {
	h := whHandler(t, whRecorderFn())
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	require.NoError(t, h.Shutdown(context.Background()))
	require.NoError(t, h.Shutdown(context.Background()), "twice")
	assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
}

// Shutdown waits for a delivery in flight, but not past its context: a
// function that does not return does not hold it.
func TestHandlerShutdownDoesNotWaitPastItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	entered := make(chan struct{})
	h := whHandler(t, func(context.Context, *payments.Event) error {
		close(entered)
		<-release
		return nil
	})
	go whServe(h, whDelivery(whPayload(), whNow, whSecret))
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "0 processed events not recorded")
	assert.Less(t, time.Since(start), 3*time.Second)
}

// Past the cap of background completions, a delivery whose function
// succeeded but whose completion failed is answered 503, not 200: the
// function ran once, the event is not recorded as done, and no retry was
// started for it.
func TestHandlerBackgroundCompletionsAreCapped(t *testing.T) {
	store := &whFailingStore{}
	store.completeFails.Store(true)
	var rec whRecorder
	var logs bytes.Buffer
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	webhook.SetMaxPendingCompletions(h, 1)
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "the first goes to the background")
	second := whEventJSON("ev-second", payments.EventPaymentCompleted, `{"id":"p-2","amount":"100.00","currency":"NGN"}`)
	assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(second, whNow, whSecret)).Code, "past the cap: 503")
	assert.EqualValues(t, 2, rec.calls.Load(), "both functions ran once")
	assert.Contains(t, logs.String(), "processed but could not be recorded as done")
	assert.Contains(t, logs.String(), "1 completions are already being retried")

	store.completeFails.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.Shutdown(ctx), "only the first was pending")
	c, err := store.MemoryClaimStore.Claim(context.Background(), whEventID)
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimDone, c.Status, "the first recorded by its background retry")
	c, err = store.MemoryClaimStore.Claim(context.Background(), "ev-second")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimInProgress, c.Status, "the second left to its lease, not recorded as done")
}

// Once Shutdown has returned (its context ended with a delivery still
// running), no background completion starts: the delivery whose
// completion fails is answered 503, and Shutdown's count stays as it was.
func TestHandlerNoBackgroundCompletionAfterShutdown(t *testing.T) {
	store := &whFailingStore{}
	store.completeFails.Store(true)
	running, finish := make(chan struct{}), make(chan struct{})
	h := whHandler(t, func(context.Context, *payments.Event) error {
		close(running)
		<-finish
		return nil
	}, webhook.WithClaimStore(store))
	answer := make(chan int, 1)
	go func() { answer <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
	<-running
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, h.Shutdown(ctx), context.Canceled)
	close(finish)
	assert.Equal(t, http.StatusServiceUnavailable, <-answer, "no background retry after Shutdown: the answer cannot say done")
	require.NoError(t, h.Shutdown(context.Background()), "nothing pending, nothing in flight")
	c, err := store.MemoryClaimStore.Claim(context.Background(), whEventID)
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimInProgress, c.Status, "left to its lease")
}
