package outcome

import (
	"time"

	"github.com/paymentsapi/payments-go/internal/testhook"
)

// WithClock makes a Tracker read the time from now: a test hook, not API
// (issue 35: no exported test seam); internal/testhook.TrackerClock is the
// same for the SDK's other tests.
func WithClock(now func() time.Time) Option {
	return testhook.TrackerClock(now).(Option)
}

// WithPollInterval sets the longest wait between two reads of the store by
// Await: a test hook (internal/testhook.TrackerPollInterval), not API.
func WithPollInterval(d time.Duration) Option {
	return testhook.TrackerPollInterval(d).(Option)
}
