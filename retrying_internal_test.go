package payments

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wait a retry is given after a 429 or 503 with a Retry-After, as the
// retry loop records it (no wall time): a Retry-After below the configured
// minimum (0, or a date already past) waits exactly the minimum; one within
// [min, max] waits what it asks; one above max waits max.
func TestRetryAfterIsHeldWithinTheRetryWaits(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	c, err := NewClient("sk_test_x", WithBaseURL("https://api.example.com"),
		WithRetryWait(750*time.Millisecond, 5*time.Second), WithRetryBudget(nil))
	require.NoError(t, err)
	SetClockForTest(c, func() time.Time { return now })
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
			st := &callState{Context: context.Background(), op: &Operation{}, retryable: true, maxRetries: 2,
				waitMin: c.retryWaitMin, waitMax: c.retryWaitMax, attempts: 1}
			resp := &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {tc.retryAfter}}}
			retry, err := c.checkRetry(st, resp, nil)
			require.NoError(t, err)
			require.True(t, retry, "%d is retried", status)
			assert.Equal(t, tc.want, st.backoff, "%d with Retry-After %q", status, tc.retryAfter)
		}
	}
}
