package webhook_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// rcRefusingStore is a MemoryClaimStore that fails the claims of some ids, or of
// all (every), as a database fails an id it cannot store, or is down.
type rcRefusingStore struct {
	webhook.MemoryClaimStore
	mu     sync.Mutex
	refuse map[string]bool
	every  bool
	err    error
}

func (s *rcRefusingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	s.mu.Lock()
	refused := s.every || s.refuse[id]
	s.mu.Unlock()
	if refused {
		return webhook.Claim{}, s.err
	}
	return s.MemoryClaimStore.Claim(ctx, id)
}

// One event whose claim the store refuses (every time) does not hold back
// the events after it: they are processed, the refused one is logged with
// its id and named in the error, which wraps the store's, and the
// checkpoint stays before it. A listing error after it (a cursor cycle,
// say) still ends the run, and is in the error too. Once the store takes
// the id, the next run processes it and moves the checkpoint to the end.
func TestReconcileGoesOnPastAnEventTheStoreRefuses(t *testing.T) {
	evs := rcEvents(t, 6)
	refused := errors.New("invalid byte sequence for encoding \"UTF8\": 0x00")
	store := &rcRefusingStore{refuse: map[string]bool{evs[1].ID: true}, err: refused}
	var rec whRecorder
	logs := new(testlog.Buffer)
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	cycle := errors.New("the service's cursors cycle")

	res, err := h.Reconcile(context.Background(), rcList(evs, cycle, nil))
	require.Error(t, err)
	assert.ErrorIs(t, err, refused)
	assert.ErrorIs(t, err, cycle)
	assert.Contains(t, err.Error(), "the store failed the claims of 1 events, left for the next run: "+evs[1].ID)
	assert.Equal(t, webhook.ReconcileResult{Processed: 5, Checkpoint: rcAt(evs[0])}, res)
	assert.Equal(t, map[string]int{evs[1].ID: 1},
		rcLogged(t, logs, "reconcile: could not claim the event; skipped, the checkpoint stays before it"))

	store.mu.Lock()
	store.refuse = nil
	store.mu.Unlock()
	res, err = h.Reconcile(context.Background(), rcList(evs, nil, nil))
	require.NoError(t, err)
	assert.Equal(t, webhook.ReconcileResult{Processed: 1, AlreadyDone: 5, Checkpoint: rcAt(evs[5])}, res)
	assert.EqualValues(t, 6, rec.successes.Load(), "each event's function succeeded once")
}

// A store that fails every claim is down, not one id bad: the run stops
// after three events in a row, without walking the rest of the listing,
// and names the three.
func TestReconcileStopsWhenTheStoreFailsClaimsInARow(t *testing.T) {
	evs := rcEvents(t, 10)
	down := errors.New("connection refused")
	store := &rcRefusingStore{every: true, err: down}
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store))
	var pulled atomic.Int64
	res, err := h.Reconcile(context.Background(), rcList(evs, nil, &pulled))
	require.ErrorIs(t, err, down)
	assert.Contains(t, err.Error(), "the store failed 3 claims in a row")
	for _, ev := range evs[:3] {
		assert.Contains(t, err.Error(), ev.ID)
	}
	assert.EqualValues(t, 3, pulled.Load(), "stopped at the third failure")
	assert.Equal(t, webhook.ReconcileResult{}, res)
	assert.Zero(t, rec.calls.Load())
}
