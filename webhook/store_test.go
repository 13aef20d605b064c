package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// whFailingStore is a webhook.ClaimStore whose methods fail on demand.
type whFailingStore struct {
	webhook.MemoryClaimStore
	claimErr error
	// completeFails makes every Complete fail while it is true.
	completeFails atomic.Bool
	// completeFailures, when positive, makes that many Completes fail
	// before they succeed.
	completeFailures, completes atomic.Int32
}

func (s *whFailingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	if s.claimErr != nil {
		return webhook.Claim{}, s.claimErr
	}
	return s.MemoryClaimStore.Claim(ctx, id)
}

func (s *whFailingStore) Complete(ctx context.Context, c webhook.Claim) error {
	n := s.completes.Add(1)
	if s.completeFails.Load() || n <= s.completeFailures.Load() {
		return errors.New("connection reset")
	}
	return s.MemoryClaimStore.Complete(ctx, c)
}

// whEventually polls cond every 10ms for up to 10s.
func whEventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 10*time.Millisecond, msg)
}

func TestWebhookHandlerStoreFailures(t *testing.T) {
	t.Run("claim fails: 503 and nothing processed", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{claimErr: errors.New("connection refused")}
		h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
		assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("complete fails: 200, retried in the background until it lands", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{}
		store.completeFails.Store(true)
		h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithClaimWait(0))
		replica := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithClaimWait(0))
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "the event was processed")
		assert.Equal(t, http.StatusConflict, whServe(replica, whDelivery(whPayload(), whNow, whSecret)).Code,
			"the claim stays taken while the completion is retried")
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code,
			"the handler that processed it remembers it")
		whEventually(t, func() bool { return store.completes.Load() >= 3 }, "Complete tried again")
		store.completeFails.Store(false)
		whEventually(t, func() bool {
			return whServe(replica, whDelivery(whPayload(), whNow, whSecret)).Code == http.StatusOK
		}, "recorded as done once the store works")
		assert.EqualValues(t, 1, rec.calls.Load(), "never processed again")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, h.Shutdown(ctx), "nothing left pending")
	})
	t.Run("complete fails twice, then works: recorded as done", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{}
		store.completeFailures.Store(2)
		h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		whEventually(t, func() bool { return store.completes.Load() == 3 }, "tried again while the store failed")
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "a redelivery is a duplicate, not a 409")
		assert.EqualValues(t, 1, rec.calls.Load())
	})
	t.Run("a store shared by two handlers (two replicas)", func(t *testing.T) {
		var rec whRecorder
		store := webhook.NewMemoryClaimStore(10)
		a := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
		b := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
		assert.Equal(t, http.StatusOK, whServe(a, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Equal(t, http.StatusOK, whServe(b, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.EqualValues(t, 1, rec.calls.Load())
	})
}

func TestMemoryClaimStoreClaims(t *testing.T) {
	ctx := context.Background()
	s := webhook.NewMemoryClaimStore(2)
	claim := func(id string) webhook.Claim {
		c, err := s.Claim(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, id, c.EventID)
		return c
	}

	before := time.Now()
	a := claim("a")
	assert.Equal(t, webhook.ClaimAcquired, a.Status)
	assert.NotEmpty(t, a.Token)
	assert.WithinRange(t, a.LeaseExpires, before.Add(webhook.DefaultLease), time.Now().Add(webhook.DefaultLease), "the default lease")
	assert.Equal(t, webhook.ClaimInProgress, claim("a").Status)
	require.NoError(t, s.Release(ctx, a))
	assert.ErrorIs(t, s.Release(ctx, a), webhook.ErrClaimLost, "settled once")
	_, err := s.Renew(ctx, a)
	assert.ErrorIs(t, err, webhook.ErrClaimLost, "a released claim cannot be renewed")

	a2 := claim("a")
	assert.Equal(t, webhook.ClaimAcquired, a2.Status, "released: free again")
	assert.NotEqual(t, a.Token, a2.Token, "every claim has its own token")
	assert.ErrorIs(t, s.Complete(ctx, a), webhook.ErrClaimLost, "an old claim cannot settle the live new one")
	r, err := s.Renew(ctx, a2)
	require.NoError(t, err)
	assert.False(t, r.LeaseExpires.Before(a2.LeaseExpires), "renewed from now")
	require.NoError(t, s.Complete(ctx, r))
	require.NoError(t, s.Complete(ctx, a2), "completing again with the same token changes nothing")
	assert.Equal(t, webhook.ClaimDone, claim("a").Status)
	assert.ErrorIs(t, s.Complete(ctx, a), webhook.ErrClaimLost, "done by another token")
	_, err = s.Renew(ctx, a2)
	assert.NoError(t, err, "renewing a claim its own token completed is no error")
	assert.ErrorIs(t, s.Complete(ctx, webhook.Claim{EventID: "zz"}), webhook.ErrClaimLost, "no token, no completion")

	var zero webhook.MemoryClaimStore
	z, err := zero.Claim(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimAcquired, z.Status, "the zero value is ready to use")

	assert.Equal(t, "done", webhook.ClaimDone.String())
	assert.Equal(t, "ClaimStatus(0)", webhook.ClaimStatus(0).String())
}

// TestMemoryClaimStoreLease: a claim that is not renewed lapses after its
// lease and the next claim takes it over; the lapsed owner can no longer
// renew, complete or release; a lapsed claim that nobody took over can still
// be completed.
func TestMemoryClaimStoreLease(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := webhook.NewMemoryClaimStoreWith(0, webhook.WithMemoryLease(time.Second),
		webhook.WithMemoryClock(func() time.Time { return now }))
	old, err := s.Claim(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, webhook.ClaimAcquired, old.Status)
	now = now.Add(999 * time.Millisecond)
	c, err := s.Claim(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimInProgress, c.Status, "within the lease")
	now = now.Add(time.Millisecond)
	taken, err := s.Claim(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, webhook.ClaimAcquired, taken.Status, "lapsed: taken over")
	_, err = s.Renew(ctx, old)
	assert.ErrorIs(t, err, webhook.ErrClaimLost)
	assert.ErrorIs(t, s.Complete(ctx, old), webhook.ErrClaimLost)
	assert.ErrorIs(t, s.Release(ctx, old), webhook.ErrClaimLost)

	// Renewed claims do not lapse.
	b, err := s.Claim(ctx, "b")
	require.NoError(t, err)
	for range 5 {
		now = now.Add(600 * time.Millisecond)
		b, err = s.Renew(ctx, b)
		require.NoError(t, err)
	}
	c, err = s.Claim(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimInProgress, c.Status, "renewed every 600ms, 3s after the claim")

	// A late Complete of a lapsed claim that nobody took over records it.
	now = now.Add(time.Hour)
	require.NoError(t, s.Complete(ctx, b))
	c, err = s.Claim(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimDone, c.Status)
}

// TestMemoryClaimStoreReplayWindow: past its bound the store forgets only ids
// processed longer ago than the replay window; inside the window it keeps
// every id and warns, so a captured delivery cannot be replayed while its
// signature still verifies, however many events arrive meanwhile.
func TestMemoryClaimStoreReplayWindow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var logs bytes.Buffer
	s := webhook.NewMemoryClaimStoreWith(3, webhook.WithMemoryClock(func() time.Time { return now }))
	// The store logs to the handler's logger: it has no option of its own.
	webhook.NewHandler(whVerifier(t, whSecret), func(context.Context, *payments.Event) error { return nil },
		webhook.WithClaimStore(s), webhook.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	process := func(id string) {
		c, err := s.Claim(ctx, id)
		require.NoError(t, err)
		require.Equal(t, webhook.ClaimAcquired, c.Status, id)
		require.NoError(t, s.Complete(ctx, c))
	}
	status := func(id string) webhook.ClaimStatus {
		c, err := s.Claim(ctx, id)
		require.NoError(t, err)
		if c.Status == webhook.ClaimAcquired {
			require.NoError(t, s.Release(ctx, c))
		}
		return c.Status
	}

	// 20 events within one minute: far over the bound of 3, all kept.
	for i := range 20 {
		process("evt-" + strconv.Itoa(i))
		now = now.Add(3 * time.Second)
	}
	assert.Equal(t, 20, s.Len())
	assert.Equal(t, webhook.ClaimDone, status("evt-0"), "the first id can still be replayed: it is remembered")
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning a minute, not one per event")
	assert.Contains(t, logs.String(), "bound=3")

	// Once the window has passed, the bound applies again: oldest first.
	now = now.Add(webhook.DefaultReplayWindow)
	process("late")
	assert.Equal(t, 3, s.Len())
	assert.Equal(t, webhook.ClaimAcquired, status("evt-0"), "forgotten past the window and the bound")
	assert.Equal(t, webhook.ClaimDone, status("evt-19"))
	assert.Equal(t, webhook.ClaimDone, status("late"))
}

// TestMemoryStoreWindowFollowsTolerance: a verifier that accepts older
// signatures makes the handler's MemoryClaimStore remember processed ids for
// twice its tolerance, so that a delivery that still verifies is not
// processed again; a shorter tolerance keeps DefaultReplayWindow.
func TestMemoryStoreWindowFollowsTolerance(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := webhook.NewMemoryClaimStoreWith(3, webhook.WithMemoryClock(func() time.Time { return now }))
	long, err := webhook.NewSignatureVerifier([]string{whSecret}, webhook.WithSignatureTolerance(20*time.Minute))
	require.NoError(t, err)
	webhook.NewHandler(long, func(context.Context, *payments.Event) error { return nil }, webhook.WithClaimStore(s))
	require.Equal(t, 40*time.Minute, webhook.ReplayWindow(s))
	process := func(id string) {
		c, err := s.Claim(ctx, id)
		require.NoError(t, err)
		require.Equal(t, webhook.ClaimAcquired, c.Status, id)
		require.NoError(t, s.Complete(ctx, c))
	}
	for i := range 5 {
		process("evt-" + strconv.Itoa(i))
	}
	now = now.Add(webhook.DefaultReplayWindow + time.Minute)
	process("late")
	c, err := s.Claim(ctx, "evt-0")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimDone, c.Status, "past DefaultReplayWindow but within twice the tolerance: still remembered")
	now = now.Add(40 * time.Minute)
	process("later")
	c, err = s.Claim(ctx, "evt-0")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimAcquired, c.Status, "past twice the tolerance and the bound: forgotten")

	short, err := webhook.NewStandardVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, webhook.WithSignatureTolerance(time.Minute))
	require.NoError(t, err)
	s2 := webhook.NewMemoryClaimStore(0)
	webhook.NewHandler(short, func(context.Context, *payments.Event) error { return nil }, webhook.WithClaimStore(s2))
	assert.Equal(t, webhook.DefaultReplayWindow, webhook.ReplayWindow(s2), "a shorter tolerance keeps the default window")
	wide, err := webhook.NewStandardVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, webhook.WithSignatureTolerance(time.Hour))
	require.NoError(t, err)
	webhook.NewHandler(wide, func(context.Context, *payments.Event) error { return nil }, webhook.WithClaimStore(s2))
	assert.Equal(t, 2*time.Hour, webhook.ReplayWindow(s2), "a StandardVerifier's tolerance counts too")
}

// TestMemoryClaimStoreReplayAfterManyEvents replays the attack of the issue:
// a captured delivery sent again within the signature tolerance, after more
// events than the default bound, on the real clock. It must not be processed
// twice.
func TestMemoryClaimStoreReplayAfterManyEvents(t *testing.T) {
	var rec whRecorder
	store := webhook.NewMemoryClaimStore(0)
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
	payload := whPayload()
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow, whSecret)).Code)
	ctx := context.Background()
	for i := range webhook.DefaultMemoryClaimStoreSize + 10 {
		c, err := store.Claim(ctx, "other-"+strconv.Itoa(i))
		require.NoError(t, err)
		require.NoError(t, store.Complete(ctx, c))
	}
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow.Add(4*time.Minute), whSecret)).Code)
	assert.EqualValues(t, 1, rec.calls.Load(), "the replay was not processed")
}
