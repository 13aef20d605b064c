package outcome

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryStore keeps outcomes in this process's memory: the default store of
// a Tracker. Several Trackers (and webhook handlers) of one process may share
// one; replicas in other processes need a shared store (eventstore/pgstore,
// eventstore/redisstore). It keeps every outcome, in memory, until the
// process stops, and then forgets them all. The zero value is not usable:
// call NewMemoryStore.
type MemoryStore struct {
	mu      sync.Mutex
	byID    map[string]Outcome
	byRef   map[string][]string // reference -> ids
	changed chan struct{}       // closed and replaced on every write: wakes the waiters of its trackers
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{byID: map[string]Outcome{}, byRef: map[string][]string{}, changed: make(chan struct{})}
}

// Load returns the outcome of an id, or of a payment reference.
func (m *MemoryStore) Load(ctx context.Context, key string) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.byID[key]
	if !ok {
		var candidates []Outcome
		for _, id := range m.byRef[key] {
			candidates = append(candidates, m.byID[id])
		}
		o, ok = PickByReference(candidates)
	}
	if !ok {
		return Outcome{}, ErrNotFound
	}
	return clone(o), nil
}

// Update applies fn to the outcome of id under the store's lock.
func (m *MemoryStore) Update(ctx context.Context, id string, fn UpdateFunc) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := clone(m.byID[id])
	next, write, err := fn(cur)
	if err != nil || !write {
		return cur, err
	}
	next = clone(next)
	m.byID[id] = next
	if next.Reference != "" && next.Reference != cur.Reference {
		m.byRef[next.Reference] = append(m.byRef[next.Reference], id)
	}
	close(m.changed)
	m.changed = make(chan struct{})
	return clone(next), nil
}

// Subscribe calls changed once, then after every write, until ctx ends
// (outcome.Subscriber). Trackers on the store do not subscribe: their
// waiters wait on the store's writes themselves, so that each write, by
// any tracker sharing the store, wakes each of them once.
func (m *MemoryStore) Subscribe(ctx context.Context, changed func()) error {
	for {
		ch := m.changes()
		changed()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// changes returns a channel closed at the store's next write.
func (m *MemoryStore) changes() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// Open returns the outcomes that are not final (see Store).
func (m *MemoryStore) Open(ctx context.Context, confirmedBefore, seenBefore time.Time) ([]Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Outcome
	for _, o := range m.byID {
		if isOpen(o, confirmedBefore, seenBefore) {
			out = append(out, clone(o))
		}
	}
	return out, nil
}

// isOpen is Store.Open's rule for one outcome.
func isOpen(o Outcome, confirmedBefore, seenBefore time.Time) bool {
	if o.State.Final() {
		return false
	}
	if o.Kind == KindPayment && !o.ConfirmedAt.IsZero() {
		return o.ConfirmedAt.Before(confirmedBefore)
	}
	return (o.Kind == KindPayment || o.Kind == KindRecipient) && o.FirstSeen.Before(seenBefore)
}

// clone copies an outcome so that no caller shares its steps.
func clone(o Outcome) Outcome {
	o.Steps = slices.Clone(o.Steps)
	if o.Conflict != nil {
		c := *o.Conflict
		o.Conflict = &c
	}
	return o
}
