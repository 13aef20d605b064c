package webhook

import "sync"

// DefaultRecentlyDone is how many events a handler remembers as processed
// (WithRecentlyDone): about a megabyte of ids.
const DefaultRecentlyDone = 10000

// WithRecentlyDone sets how many of the events it processed, or found
// processed, the handler remembers in memory (default DefaultRecentlyDone;
// 0 remembers none, n < 0 keeps the default), so as to answer their
// duplicates 200 without a round trip to the store: the most common
// delivery a receiver gets, when it comes back to the replica that saw the
// event. A remembered event was processed successfully (the function
// returned nil, and with a transactional store its transaction committed)
// or the store said so, which stays true whatever the store does later:
// forget it after its retention, lose it, or stop answering. The oldest
// are forgotten first. A handler whose store is a MemoryStore remembers
// none: its store is in memory already. Test:
// TestRecentlyDoneAnswersWithoutTheStore.
func WithRecentlyDone(n int) HandlerOption {
	return func(h *Handler) {
		if n >= 0 {
			h.recentSize = n
		}
	}
}

// recentlyDone remembers the ids of the last events seen done, in the
// order they were added (a ring, the oldest overwritten first).
type recentlyDone struct {
	mu   sync.Mutex
	ids  map[string]struct{}
	ring []string
	next int
}

func newRecentlyDone(n int) *recentlyDone {
	if n <= 0 {
		return nil
	}
	return &recentlyDone{ids: make(map[string]struct{}, n), ring: make([]string, 0, n)}
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
