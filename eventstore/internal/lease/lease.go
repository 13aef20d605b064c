// Package lease holds what the shared-database claim stores and outcome stores agree on: their
// defaults, the checks of their options and the random claim token.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultLease is how long a claim lasts, unless the handler renews it,
	// before another delivery may take the event over: webhook.DefaultLease,
	// a third of the sender's retry span, so that the claim of a replica
	// that died lapses while the sender still retries.
	DefaultLease = webhook.DefaultLease
	// DefaultTimeout bounds each call a store makes to its database:
	// webhook.DefaultStoreTimeout.
	DefaultTimeout = webhook.DefaultStoreTimeout
	// DefaultRetention is how long a processed event id is remembered.
	DefaultRetention = 7 * 24 * time.Hour
	// MinRetention is the shortest retention accepted: a delivery signed at
	// t verifies until t+tolerance on a receiver whose clock is up to
	// tolerance behind, so an id forgotten earlier could be replayed.
	MinRetention = 2 * webhook.DefaultSignatureTolerance
)

// ErrInvalidOption matches every error a store's constructor returns for a
// bad option.
var ErrInvalidOption = errors.New("invalid claim store option")

// Invalid returns an error matching ErrInvalidOption.
func Invalid(pkg, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", pkg, ErrInvalidOption, fmt.Sprintf(format, args...))
}

// Check validates a lease, a retention and a call timeout together.
func Check(pkg string, lease, retention, timeout time.Duration) error {
	switch {
	case timeout <= 0:
		return Invalid(pkg, "the timeout must be positive, got %v", timeout)
	case lease < time.Millisecond:
		return Invalid(pkg, "the lease must be at least 1ms, got %v", lease)
	case lease%time.Millisecond != 0:
		return Invalid(pkg, "the lease must be a whole number of milliseconds, got %v", lease)
	case retention < MinRetention:
		return Invalid(pkg, "the retention must be at least %v (twice the signature tolerance), got %v", MinRetention, retention)
	case retention%time.Millisecond != 0:
		return Invalid(pkg, "the retention must be a whole number of milliseconds, got %v", retention)
	case lease >= retention:
		return Invalid(pkg, "the lease (%v) must be shorter than the retention (%v)", lease, retention)
	}
	return nil
}

// NewToken returns 128 random bits in hex: a claim token no other claim
// will ever carry.
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("no random claim token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Expiry returns when a claim made now (read before the claim was sent)
// lapses, on the caller's monotonic clock. The database starts the lease
// when it runs the claim, after start, so the caller's deadline always comes
// first whatever the skew between the two clocks.
func Expiry(start time.Time, lease time.Duration) time.Time {
	return start.Add(lease)
}

// Bound returns ctx with a deadline at most timeout away. When ctx's own
// deadline comes sooner (the handler gives one to every call), ctx is kept
// as it is, and the returned cancel does nothing: no timer per call.
func Bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}
