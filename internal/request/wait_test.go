package request

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wait a retry is given after a 429 or 503 with a Retry-After, as the
// Backoff hook of every call computes it on the Client's clock (no wall
// time): a Retry-After below the call's minimum (0, or a date already past)
// waits exactly the minimum; one within [min, max] waits what it asks; one
// above max waits max.
func TestRetryAfterIsHeldWithinTheRetryWaits(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := (&Shared{HTTPClient: &http.Client{}}).Init(5 * time.Second)
	s.SetClock(func() time.Time { return now }, nil)
	for _, tc := range []struct {
		retryAfter string
		want       time.Duration
	}{
		{"0", 750 * time.Millisecond},
		{now.Add(-time.Minute).Format(http.TimeFormat), 750 * time.Millisecond},
		{"2", 2 * time.Second},
		{"3600", 5 * time.Second},
	} {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			c := &Call{Shared: s, ctx: context.Background(), Retryable: true, MaxRetries: 2, attempts: 1}
			resp := &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {tc.retryAfter}}}
			retry, err := c.checkRetry(context.Background(), resp, nil)
			require.NoError(t, err)
			require.True(t, retry, "%d is retried", status)
			assert.Equal(t, tc.want, s.backoff(750*time.Millisecond, 5*time.Second, 0, resp), "%d with Retry-After %q", status, tc.retryAfter)
		}
	}
}
