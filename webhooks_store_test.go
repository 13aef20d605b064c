package payments_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// whFailingStore is an EventStore whose methods fail on demand.
type whFailingStore struct {
	payments.MemoryEventStore
	claimErr, completeErr error
}

func (s *whFailingStore) Claim(ctx context.Context, id string) (payments.ClaimStatus, error) {
	if s.claimErr != nil {
		return 0, s.claimErr
	}
	return s.MemoryEventStore.Claim(ctx, id)
}

func (s *whFailingStore) Complete(ctx context.Context, id string) error {
	if s.completeErr != nil {
		return s.completeErr
	}
	return s.MemoryEventStore.Complete(ctx, id)
}

func TestWebhookHandlerStoreFailures(t *testing.T) {
	t.Run("claim fails: 503 and nothing processed", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{claimErr: errors.New("connection refused")}
		h := whHandler(t, rec.fn(whOK), payments.WithEventStore(store))
		assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("complete fails: the event was processed, so 200", func(t *testing.T) {
		var rec whRecorder
		store := &whFailingStore{completeErr: errors.New("connection reset")}
		h := whHandler(t, rec.fn(whOK), payments.WithEventStore(store))
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Equal(t, http.StatusConflict, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code,
			"the claim stays taken rather than risk processing twice")
		assert.EqualValues(t, 1, rec.calls.Load())
	})
	t.Run("a store shared by two handlers (two replicas)", func(t *testing.T) {
		var rec whRecorder
		store := payments.NewMemoryEventStore(10)
		a := whHandler(t, rec.fn(whOK), payments.WithEventStore(store))
		b := whHandler(t, rec.fn(whOK), payments.WithEventStore(store))
		assert.Equal(t, http.StatusOK, whServe(a, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.Equal(t, http.StatusOK, whServe(b, whDelivery(whPayload(), whNow, whSecret)).Code)
		assert.EqualValues(t, 1, rec.calls.Load())
	})
}

func TestMemoryEventStore(t *testing.T) {
	ctx := context.Background()
	s := payments.NewMemoryEventStore(2)
	claim := func(id string) payments.ClaimStatus {
		st, err := s.Claim(ctx, id)
		require.NoError(t, err)
		return st
	}

	assert.Equal(t, payments.ClaimAcquired, claim("a"))
	assert.Equal(t, payments.ClaimInProgress, claim("a"))
	require.NoError(t, s.Release(ctx, "a"))
	assert.Equal(t, payments.ClaimAcquired, claim("a"), "released: free again")
	require.NoError(t, s.Complete(ctx, "a"))
	assert.Equal(t, payments.ClaimDone, claim("a"))

	for _, id := range []string{"b", "c"} {
		assert.Equal(t, payments.ClaimAcquired, claim(id))
		require.NoError(t, s.Complete(ctx, id))
	}
	assert.Equal(t, 2, s.Len(), "bounded to 2 processed ids")
	assert.Equal(t, payments.ClaimAcquired, claim("a"), "the least recently seen id was forgotten")
	assert.Equal(t, payments.ClaimDone, claim("c"))

	// In-progress claims are never evicted, whatever the bound.
	for _, id := range []string{"d", "e", "f"} {
		assert.Equal(t, payments.ClaimAcquired, claim(id))
	}
	require.NoError(t, s.Complete(ctx, "d"))
	assert.Equal(t, payments.ClaimInProgress, claim("e"))
	assert.Equal(t, payments.ClaimInProgress, claim("f"))

	var zero payments.MemoryEventStore
	st, err := zero.Claim(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, payments.ClaimAcquired, st, "the zero value is ready to use")

	assert.Equal(t, "done", payments.ClaimDone.String())
	assert.Equal(t, "ClaimStatus(0)", payments.ClaimStatus(0).String())
}
