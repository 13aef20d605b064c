package webhook

import (
	"log/slog"
	"time"
)

// Test hooks: settings the package's own tests need and a merchant does not,
// so they are not part of the API (issue 35: no exported test seam).

// WithSignatureClock makes a verifier read the current time from now.
func WithSignatureClock(now func() time.Time) VerifierOption {
	return VerifierOption{func(v *verifierConfig) error {
		v.now = now
		return nil
	}}
}

// WithMemoryClock makes a MemoryStore read the time from now: the replay
// window and the leases inside the store run on it; the LeaseExpires it
// returns stays on the real clock, which the handler's timers run on.
func WithMemoryClock(now func() time.Time) MemoryStoreOption {
	return func(s *MemoryStore) {
		if now != nil {
			s.now, s.clock = now, true
		}
	}
}

// WithMemoryLease sets how long a MemoryStore's claim lasts unless renewed.
func WithMemoryLease(d time.Duration) MemoryStoreOption {
	return func(s *MemoryStore) {
		if d > 0 {
			s.lease = d
		}
	}
}

// WithMemoryLogger gives a MemoryStore its logger before any handler does.
func WithMemoryLogger(l *slog.Logger) MemoryStoreOption {
	return func(s *MemoryStore) { s.logger = l }
}
