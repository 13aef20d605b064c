package payments

// This file is an internal test: it reaches the Client's unexported parts,
// and exports hooks (below) to the external tests of package payments_test.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetClockForTest makes c read the time from now. Call it before c is used.
func SetClockForTest(c *Client, now func() time.Time) {
	c.now = now
	c.shared.SetClock(now, nil)
}

// SetSleepForTest makes c wait between attempts with sleep (the back-off,
// the pause after a 429, the rate limit's turn). Call it before c is used.
func SetSleepForTest(c *Client, sleep func(ctx context.Context, d time.Duration) error) {
	c.shared.SetClock(nil, sleep)
}

// RetryLoggerForTest returns the Logger of the go-retryablehttp client that
// a call of c gets.
func RetryLoggerForTest(c *Client) any { return callForTest(c).Retrying().Logger }

func TestNewClientFromEnv(t *testing.T) {
	t.Run("reads both variables", func(t *testing.T) {
		t.Setenv("PAYMENTS_API_KEY", "sk_test_FromEnv")
		t.Setenv("PAYMENTS_BASE_URL", "https://sandbox.payments.example/")
		c, err := NewClientFromEnv()
		require.NoError(t, err)
		assert.Equal(t, "Bearer sk_test_FromEnv", c.key.bearer)
		assert.Equal(t, "https://sandbox.payments.example", c.baseURL)
	})
	t.Run("options override the environment", func(t *testing.T) {
		t.Setenv("PAYMENTS_API_KEY", "sk_test_FromEnv")
		t.Setenv("PAYMENTS_BASE_URL", "https://sandbox.payments.example")
		c, err := NewClientFromEnv(WithBaseURL("http://127.0.0.1:9999"))
		require.NoError(t, err)
		assert.Equal(t, "http://127.0.0.1:9999", c.baseURL)
	})
	t.Run("missing key", func(t *testing.T) {
		t.Setenv("PAYMENTS_API_KEY", "")
		t.Setenv("PAYMENTS_BASE_URL", "https://sandbox.payments.example")
		_, err := NewClientFromEnv()
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "API key is empty")
	})
	t.Run("missing base URL", func(t *testing.T) {
		t.Setenv("PAYMENTS_API_KEY", "sk_test_FromEnv")
		t.Setenv("PAYMENTS_BASE_URL", "")
		_, err := NewClientFromEnv()
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "PAYMENTS_BASE_URL")
	})
}
