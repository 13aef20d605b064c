package redisstore

// This file is a copy of eventstore/pgstore/lease.go: what the two
// shared-database stores agree on (the checks of their options, the claim
// token, a call's deadline). The stores are separate modules, released on
// their own, so each keeps its copy instead of importing an internal package
// of another module (TestNoInternalImportAcrossModules in the root module).
// Change both together; TestLeaseCopiesMatch, in the root module, fails when
// they differ outside this package clause.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// invalid returns an error matching the store's ErrInvalidOption.
func invalid(format string, args ...any) error {
	return fmt.Errorf("redisstore: %w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}

// checkLease validates a lease, a retention and a call timeout together.
func checkLease(lease, retention, timeout time.Duration) error {
	switch {
	case timeout <= 0:
		return invalid("the timeout must be positive, got %v", timeout)
	case lease < time.Millisecond:
		return invalid("the lease must be at least 1ms, got %v", lease)
	case lease%time.Millisecond != 0:
		return invalid("the lease must be a whole number of milliseconds, got %v", lease)
	case retention < MinRetention:
		return invalid("the retention must be at least %v (twice the signature tolerance), got %v", MinRetention, retention)
	case retention%time.Millisecond != 0:
		return invalid("the retention must be a whole number of milliseconds, got %v", retention)
	case lease >= retention:
		return invalid("the lease (%v) must be shorter than the retention (%v)", lease, retention)
	}
	return nil
}

// newToken returns 128 random bits in hex: a claim token no other claim
// will ever carry.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("no random claim token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// leaseExpiry returns when a claim made now (read before the claim was
// sent) lapses, on the caller's monotonic clock. The database starts the
// lease when it runs the claim, after start, so the caller's deadline always
// comes first whatever the skew between the two clocks.
func leaseExpiry(start time.Time, lease time.Duration) time.Time {
	return start.Add(lease)
}

// boundCall returns ctx with a deadline at most timeout away. When ctx's own
// deadline comes sooner (the handler gives one to every call), ctx is kept
// as it is, and the returned cancel does nothing: no timer per call.
func boundCall(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}
