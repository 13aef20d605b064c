package outcome

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Store.Load for an id or reference the store
// has no outcome for.
var ErrNotFound = errors.New("outcome: not tracked")

// PickByReference returns the outcome a payment reference names when
// several payments carry it (the service accepts a reference again once
// the quote of the payment that had it expired unconfirmed): a final one
// first, then a confirmed one, then the one first seen last (the greatest
// id breaks a tie). It returns false for none. Stores' Load follows it.
func PickByReference(candidates []Outcome) (Outcome, bool) {
	var best Outcome
	found := false
	for _, o := range candidates {
		if !found || better(o, best) {
			best, found = o, true
		}
	}
	return best, found
}

func better(a, b Outcome) bool {
	if a.State.Final() != b.State.Final() {
		return a.State.Final()
	}
	if ac, bc := !a.ConfirmedAt.IsZero(), !b.ConfirmedAt.IsZero(); ac != bc {
		return ac
	}
	if !a.FirstSeen.Equal(b.FirstSeen) {
		return a.FirstSeen.After(b.FirstSeen)
	}
	return a.ID > b.ID
}

// Subscriber is a Store that can tell a tracker when any replica wrote an
// outcome, so that Await in another process returns without waiting for
// its next read of the store (which stays the fallback: a lost
// notification only delays it). pgstore's OutcomeStore (LISTEN/NOTIFY) and
// redisstore's (pub/sub) are Subscribers.
type Subscriber interface {
	// Subscribe calls changed once the subscription is made (writes
	// before it were not seen), then after every write of an outcome by
	// any replica (or more often), until ctx ends. It returns the store's error
	// when the subscription fails (the tracker subscribes again after a
	// while), and ctx's when ctx ends.
	Subscribe(ctx context.Context, changed func()) error
}

// UpdateFunc computes the outcome to record from the one recorded (the zero
// Outcome when there is none). It returns false when there is nothing to
// write. A store may call it more than once (when another replica wrote in
// between); it must not have side effects.
type UpdateFunc func(cur Outcome) (next Outcome, write bool, err error)

// Store keeps outcomes where every replica of a receiver can read them.
// MemoryStore is the default; eventstore/pgstore and eventstore/redisstore
// have shared ones. Implementations are safe for concurrent use, and bound
// every call by its context.
type Store interface {
	// Load returns the outcome of a payment or recipient id, or of a
	// payment reference when no id matches (of several payments with the
	// reference, the one PickByReference picks); ErrNotFound when neither
	// does.
	Load(ctx context.Context, idOrReference string) (Outcome, error)
	// Update reads the outcome of id, calls fn, and records what fn returns
	// when it says to write, atomically with respect to other Updates of id
	// (from any replica). It writes nothing when fn returns false or an
	// error, and returns fn's error as is.
	Update(ctx context.Context, id string, fn UpdateFunc) (Outcome, error)
	// Open returns the outcomes that are not final: payments confirmed
	// (ConfirmedAt) before confirmedBefore; payments never confirmed
	// (ConfirmedAt zero: known only from their events) first seen before
	// seenBefore; and recipients first seen before seenBefore. The order
	// is unspecified. Test: the Open case of each store's conformance test.
	Open(ctx context.Context, confirmedBefore, seenBefore time.Time) ([]Outcome, error)
}
