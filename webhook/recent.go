package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/paymentsapi/payments-go"
)

// DefaultRecentlyDone is how many events a handler remembers as processed:
// about a megabyte of ids.
//
// A handler remembers the last DefaultRecentlyDone events it processed, or
// found processed, in memory, so as to answer their duplicates 200 without a
// round trip to the store: the most common delivery a receiver gets, when it
// comes back to the replica that saw the event. A remembered event was
// processed successfully (the function returned nil, and with a
// transactional store its transaction committed) or the store said so,
// which stays true whatever the store does later: forget it after its
// retention, lose it, or stop answering. The oldest are forgotten first. A
// delivery of an event that this handler is processing waits for that
// delivery (within WithClaimWait) without asking the store either: 200 once
// it succeeded, 409 if it is still running after the claim wait; if it
// failed, the waiting delivery claims the event in the store as usual. A
// handler whose store is a MemoryClaimStore remembers none and does not wait
// so: its store is in memory already. Tests:
// TestRecentlyDoneAnswersWithoutTheStore, TestRecentlyDoneWaitsForItsOwnDelivery.
const DefaultRecentlyDone = 10000

// recentlyDone remembers the ids of the last events seen done, in the
// order they were added (a ring, the oldest overwritten first), and the
// events that deliveries of this handler are processing.
type recentlyDone struct {
	mu       sync.Mutex
	ids      map[string]struct{}
	ring     []string
	next     int
	inFlight map[string]chan struct{} // closed when that delivery ends
}

func newRecentlyDone(n int) *recentlyDone {
	if n <= 0 {
		return nil
	}
	return &recentlyDone{ids: make(map[string]struct{}, n), ring: make([]string, 0, n), inFlight: map[string]chan struct{}{}}
}

// has says whether id is remembered as done. A nil recentlyDone remembers
// nothing.
func (r *recentlyDone) has(id string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ids[id]
	return ok
}

// add remembers id as done, forgetting the oldest id when full.
func (r *recentlyDone) add(id string) {
	if r == nil || id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.ids[id]; ok {
		return
	}
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, id)
	} else {
		delete(r.ids, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.ids[id] = struct{}{}
}

// enter marks id in flight and returns leave, to call when the delivery
// ends; when another delivery of id is in flight, it returns a channel
// closed when that one ends, and a nil leave.
func (r *recentlyDone) enter(id string) (busy <-chan struct{}, leave func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.inFlight[id]; ok {
		return ch, nil
	}
	ch := make(chan struct{})
	r.inFlight[id] = ch
	return nil, func() {
		r.mu.Lock()
		delete(r.inFlight, id)
		r.mu.Unlock()
		close(ch)
	}
}

// local answers a delivery from what this handler knows: 200 for an event
// it remembers as done; for one another of its deliveries is processing,
// it waits (within the claim wait) for that one to end, then answers 200 if
// it succeeded, 409 if it is still running. Otherwise it marks the event in
// flight and returns leave, to call when the delivery ends (nil when the
// handler remembers nothing), and what is left of the claim wait for the
// store: one delivery waits one claim wait in all.
func (h *Handler) local(ctx context.Context, w http.ResponseWriter, ev *payments.Event, id string) (leave func(), wait time.Duration, answered bool) {
	if h.recent == nil {
		return nil, h.claimWait, false
	}
	var deadline time.Time
	left := func() time.Duration {
		if deadline.IsZero() {
			return h.claimWait
		}
		return max(time.Until(deadline), 0)
	}
	for {
		if h.recent.has(id) {
			h.answer(ctx, w, http.StatusOK, ev, OutcomeDuplicate, nil, slog.LevelInfo, "duplicate delivery of a processed event: skipped (remembered by this handler)")
			return nil, 0, true
		}
		busy, leave := h.recent.enter(id)
		if leave != nil {
			return leave, left(), false
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(h.claimWait)
		}
		if !waitUntil(ctx, busy, deadline) {
			h.refuse(ctx, w, http.StatusConflict, ev, OutcomeInProgress, nil, "event is being processed by another delivery")
			return nil, 0, true
		}
		// It ended: done (remembered), or failed and the event is free.
	}
}

// waitUntil waits for ch to close, until deadline or the end of ctx, and
// says whether it closed.
func waitUntil(ctx context.Context, ch <-chan struct{}, deadline time.Time) bool {
	wait := time.Until(deadline)
	if wait <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
