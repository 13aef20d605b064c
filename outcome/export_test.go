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
