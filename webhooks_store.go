package payments

import (
	"container/list"
	"context"
	"strconv"
	"sync"
)

// ClaimStatus is an EventStore's answer to Claim.
type ClaimStatus int

const (
	// ClaimAcquired: the caller now owns the event and must process it,
	// then call Complete (success) or Release (failure).
	ClaimAcquired ClaimStatus = iota + 1
	// ClaimInProgress: another delivery owns the event right now.
	ClaimInProgress
	// ClaimDone: the event was already processed successfully.
	ClaimDone
)

// String names the status.
func (s ClaimStatus) String() string {
	switch s {
	case ClaimAcquired:
		return "acquired"
	case ClaimInProgress:
		return "in progress"
	case ClaimDone:
		return "done"
	}
	return "ClaimStatus(" + strconv.Itoa(int(s)) + ")"
}

// EventStore records which events a receiver has processed, so that a
// webhook delivered twice (the service retries, and may deliver an event
// again after a timeout) is processed once. An event id goes through:
//
//	Claim -> ClaimAcquired -> (your EventFunc) -> Complete   (done for good)
//	                                           -> Release    (failed: free again)
//
// Claim must be atomic: of several concurrent Claims of one id, at most one
// gets ClaimAcquired; the others get ClaimInProgress until Complete or
// Release, and ClaimDone after Complete. The handler calls Complete or
// Release exactly once after each ClaimAcquired, with a context that is not
// cancelled when the request is.
//
// MemoryEventStore, the default, lives in one process: it forgets everything
// on restart and is not shared between replicas. If your receiver runs on
// several instances, implement EventStore on your database, for example a
// table keyed by event id:
//
//   - Claim: INSERT (id, state='processing', claimed_at=now); a unique-key
//     violation means the id exists: return ClaimDone if its state is
//     'done', else ClaimInProgress — or take the claim over if claimed_at is
//     older than a lease (a few minutes), since its owner may have crashed.
//   - Complete: UPDATE state='done'. Keep done rows at least as long as the
//     service may retry (days, to be safe).
//   - Release: DELETE the row while its state is 'processing'.
//
// A store only guards the handler's call to your function. For exactly-once
// effects across crashes, also make the function itself idempotent, for
// example by recording the event id in the same transaction as the change it
// makes.
type EventStore interface {
	// Claim tries to take ownership of the event id. An error makes the
	// handler answer 503 without processing the event.
	Claim(ctx context.Context, id string) (ClaimStatus, error)
	// Complete records that the claimed event was processed successfully.
	Complete(ctx context.Context, id string) error
	// Release gives up the claim on an event that failed, so that the next
	// delivery processes it.
	Release(ctx context.Context, id string) error
}

// DefaultMemoryEventStoreSize is how many processed event ids a
// MemoryEventStore remembers by default.
const DefaultMemoryEventStoreSize = 10000

// MemoryEventStore is an EventStore in memory, bounded to a number of
// processed event ids: past that, the least recently seen ids are
// forgotten, and a very late redelivery of one would be processed again.
// Events being processed are always remembered and never count against the
// bound.
//
// It is private to the process: it does not survive a restart and replicas
// do not share it (see EventStore for a shared one). A claim lasts exactly as
// long as the handler's call to your function. The zero value is ready to
// use, with DefaultMemoryEventStoreSize; it is safe for concurrent use.
type MemoryEventStore struct {
	mu         sync.Mutex
	max        int
	inProgress map[string]struct{}
	done       map[string]*list.Element // values are ids
	order      *list.List               // done ids, most recently seen first
}

// NewMemoryEventStore returns an in-memory store that remembers up to
// maxEntries processed event ids (DefaultMemoryEventStoreSize when
// maxEntries <= 0).
func NewMemoryEventStore(maxEntries int) *MemoryEventStore {
	return &MemoryEventStore{max: maxEntries}
}

func (s *MemoryEventStore) init() {
	if s.inProgress == nil {
		s.inProgress = make(map[string]struct{})
		s.done = make(map[string]*list.Element)
		s.order = list.New()
	}
	if s.max <= 0 {
		s.max = DefaultMemoryEventStoreSize
	}
}

// Claim implements EventStore.
func (s *MemoryEventStore) Claim(_ context.Context, id string) (ClaimStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if e, ok := s.done[id]; ok {
		s.order.MoveToFront(e)
		return ClaimDone, nil
	}
	if _, ok := s.inProgress[id]; ok {
		return ClaimInProgress, nil
	}
	s.inProgress[id] = struct{}{}
	return ClaimAcquired, nil
}

// Complete implements EventStore.
func (s *MemoryEventStore) Complete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.inProgress, id)
	if e, ok := s.done[id]; ok {
		s.order.MoveToFront(e)
		return nil
	}
	s.done[id] = s.order.PushFront(id)
	for s.order.Len() > s.max {
		oldest := s.order.Back()
		s.order.Remove(oldest)
		delete(s.done, oldest.Value.(string))
	}
	return nil
}

// Release implements EventStore.
func (s *MemoryEventStore) Release(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.inProgress, id)
	return nil
}

// Len returns how many processed event ids the store remembers.
func (s *MemoryEventStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.done)
}
