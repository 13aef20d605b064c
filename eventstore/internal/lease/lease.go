// Package lease holds what the shared-database EventStores agree on: their
// defaults, the checks of their options and the random claim token.
package lease

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultLease is how long a claim lasts before another delivery may
	// take the event over. It is shorter than the service's first retry
	// back-off, so that the claim of a replica that died has lapsed by the
	// time the event is delivered again.
	DefaultLease = time.Minute
	// DefaultRetention is how long a processed event id is remembered.
	DefaultRetention = 7 * 24 * time.Hour
	// MinRetention is the shortest retention accepted: a delivery signed at
	// t verifies until t+tolerance on a receiver whose clock is up to
	// tolerance behind, so an id forgotten earlier could be replayed.
	MinRetention = 2 * webhook.DefaultSignatureTolerance
)

// ErrInvalidOption matches every error a store's constructor returns for a
// bad option.
var ErrInvalidOption = errors.New("invalid event store option")

// Invalid returns an error matching ErrInvalidOption.
func Invalid(pkg, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", pkg, ErrInvalidOption, fmt.Sprintf(format, args...))
}

// Check validates a lease and a retention together.
func Check(pkg string, lease, retention time.Duration) error {
	switch {
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
