package outcome

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Store.Load for an id or reference the store
// has no outcome for.
var ErrNotFound = errors.New("outcome: not tracked")

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
	// payment reference when no id matches; ErrNotFound when neither does.
	Load(ctx context.Context, idOrReference string) (Outcome, error)
	// Update reads the outcome of id, calls fn, and records what fn returns
	// when it says to write, atomically with respect to other Updates of id
	// (from any replica). It writes nothing when fn returns false or an
	// error, and returns fn's error as is.
	Update(ctx context.Context, id string, fn UpdateFunc) (Outcome, error)
	// Open returns the outcomes that are not final: payments confirmed
	// (ConfirmedAt) before confirmedBefore, and recipients first seen before
	// seenBefore. The order is unspecified.
	Open(ctx context.Context, confirmedBefore, seenBefore time.Time) ([]Outcome, error)
}
