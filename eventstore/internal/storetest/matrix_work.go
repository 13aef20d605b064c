package storetest

import (
	"context"
	"sync"
	"time"
)

// matrixSlowWork is how long a slow event's function works (one event in
// 25 at the ci and full sizes): longer than the lease, so that its claim
// lives by renewals alone.
const matrixSlowWork = 7500 * time.Millisecond // 1.5 leases of 5 s

// Worker is the work of the matrix's functions: matrixWork per event,
// matrixSlowWork for the slow ones, both honouring the context. It finds
// overlaps: a run of an event that starts while another run of it is
// still working on a live replica. The handler stops a function a safety
// margin before its lease ends, so a function that honours its context
// never overlaps the next delivery's run, whatever the fault: an overlap
// fails the matrix in every mode (a broken renewal makes them).
type Worker struct {
	mu       sync.Mutex
	slow     map[string]bool
	active   map[string]map[*run]bool
	overlaps int
}

type run struct{ alive func() bool }

func newWorker() *Worker {
	return &Worker{slow: map[string]bool{}, active: map[string]map[*run]bool{}}
}

// setSlow makes every every-th of ids slow.
func (w *Worker) setSlow(ids []string, every int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 0; i < len(ids); i += every {
		w.slow[ids[i]] = true
	}
}

// Do works on event id for a replica that lives while alive() holds. It
// returns ctx's error when ctx ends first, errDead when the replica died
// meanwhile (a dead process returns nothing: never success), nil when the
// work is done.
func (w *Worker) Do(ctx context.Context, id string, alive func() bool) error {
	return w.DoWith(ctx, id, alive, func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	})
}

// DoWith is Do with the work done by work, given how long it lasts: a
// statement in the function's transaction, say, as a Transactional
// function must keep its transaction busy (pgstore's rules).
func (w *Worker) DoWith(ctx context.Context, id string, alive func() bool, work func(context.Context, time.Duration) error) error {
	r := &run{alive: alive}
	w.mu.Lock()
	for other := range w.active[id] {
		if other.alive() {
			w.overlaps++
		}
	}
	if w.active[id] == nil {
		w.active[id] = map[*run]bool{}
	}
	w.active[id][r] = true
	d := matrixWork
	if w.slow[id] {
		d = matrixSlowWork
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.active[id], r)
		w.mu.Unlock()
	}()
	if err := work(ctx, d); err != nil {
		return err
	}
	if !alive() {
		return errDead
	}
	return nil
}

// Overlaps is how many runs started while another run of their event was
// working on a live replica.
func (w *Worker) Overlaps() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.overlaps
}
