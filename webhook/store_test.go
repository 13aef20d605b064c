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

	"github.com/paymentsapi/payments-go/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// whFailingStore is an webhook.Store whose methods fail on demand.
type whFailingStore struct {
	webhook.MemoryStore
	claimErr, completeErr error
	// completeFailures, when positive, makes that many Completes fail
	// before they succeed.
	completeFailures, completes atomic.Int32
}

func (s *whFailingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	if s.claimErr != nil {
		return webhook.Claim{}, s.claimErr
	}
	return s.MemoryStore.Claim(ctx, id)
}

func (s *whFailingStore) Complete(ctx context.Context, c webhook.Claim) error {
	n := s.completes.Add(1)
	if s.completeErr != nil {
		return s.completeErr
	}
	if n <= s.completeFailures.Load() {
		return errors.New("connection reset")
	}
	return s.MemoryStore.Complete(ctx, c)
}

func TestWebhookHandlerStoreFailures(t *testing.T) {
	t.Run("claim fails: 503 and nothing processed", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{claimErr: errors.New("connection refused")}
		h := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
		assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("complete fails: the event was processed, so 200", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{completeErr: errors.New("connection reset")}
		h := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Equal(t, http.StatusConflict, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code,
			"the claim stays taken rather than risk processing twice")
		assert.EqualValues(t, 1, rec.calls.Load())
		assert.EqualValues(t, 4, store.completes.Load(), "four tries, then given up; the second delivery got 409 and completed nothing")
	})
	t.Run("complete fails twice, then works: recorded as done", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{}
		store.completeFailures.Store(2)
		h := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.EqualValues(t, 3, store.completes.Load(), "tried again while the store failed")
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "a redelivery is a duplicate, not a 409")
		assert.EqualValues(t, 1, rec.calls.Load())
	})
	t.Run("a store shared by two handlers (two replicas)", func(t *testing.T) {
		var rec whRecorder
		store := webhook.NewMemoryStore(10)
		a := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
		b := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
		assert.Equal(t, http.StatusOK, whServe(a, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Equal(t, http.StatusOK, whServe(b, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.EqualValues(t, 1, rec.calls.Load())
	})
}

func TestMemoryEventStoreClaims(t *testing.T) {
	ctx := context.Background()
	s := webhook.NewMemoryStore(2)
	claim := func(id string) webhook.Claim {
		c, err := s.Claim(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, id, c.EventID)
		return c
	}

	a := claim("a")
	assert.Equal(t, webhook.ClaimAcquired, a.Status)
	assert.NotEmpty(t, a.Token)
	assert.True(t, a.LeaseExpires.IsZero(), "a memory claim never lapses")
	assert.Equal(t, webhook.ClaimInProgress, claim("a").Status)
	require.NoError(t, s.Release(ctx, a))
	assert.ErrorIs(t, s.Release(ctx, a), webhook.ErrClaimLost, "settled once")

	a2 := claim("a")
	assert.Equal(t, webhook.ClaimAcquired, a2.Status, "released: free again")
	assert.NotEqual(t, a.Token, a2.Token, "every claim has its own token")
	assert.ErrorIs(t, s.Complete(ctx, a), webhook.ErrClaimLost, "an old claim cannot settle the new one")
	require.NoError(t, s.Complete(ctx, a2))
	assert.Equal(t, webhook.ClaimDone, claim("a").Status)
	assert.ErrorIs(t, s.Complete(ctx, webhook.Claim{EventID: "zz"}), webhook.ErrClaimLost, "no claim, no completion")

	var zero webhook.MemoryStore
	z, err := zero.Claim(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, webhook.ClaimAcquired, z.Status, "the zero value is ready to use")

	assert.Equal(t, "done", webhook.ClaimDone.String())
	assert.Equal(t, "ClaimStatus(0)", webhook.ClaimStatus(0).String())
}

// TestMemoryEventStoreReplayWindow: past its bound the store forgets only ids
// processed longer ago than the replay window; inside the window it keeps
// every id and warns, so a captured delivery cannot be replayed while its
// signature still verifies, however many events arrive meanwhile.
func TestMemoryEventStoreReplayWindow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var logs bytes.Buffer
	s := webhook.NewMemoryStore(3,
		webhook.WithStoreClock(func() time.Time { return now }),
		webhook.WithStoreLogger(slog.New(slog.NewTextHandler(&logs, nil))))
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

// TestMemoryEventStoreReplayAfterManyEvents replays the attack of the issue:
// a captured delivery sent again within the signature tolerance, after more
// events than the default bound, on the real clock. It must not be processed
// twice.
func TestMemoryEventStoreReplayAfterManyEvents(t *testing.T) {
	var rec whRecorder
	store := webhook.NewMemoryStore(0)
	h := whHandler(t, rec.fn(whOK), webhook.WithStore(store))
	payload := whPayload()
	require.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow, whSecret)).Code)
	ctx := context.Background()
	for i := range webhook.DefaultMemoryStoreSize + 10 {
		c, err := store.Claim(ctx, "other-"+strconv.Itoa(i))
		require.NoError(t, err)
		require.NoError(t, store.Complete(ctx, c))
	}
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow.Add(4*time.Minute), whSecret)).Code)
	assert.EqualValues(t, 1, rec.calls.Load(), "the replay was not processed")
}
