package payments

// This file is an internal test: it reaches the Client's unexported parts,
// and exports hooks (below) to the external tests of package payments_test.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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

// The URL of an operation without an id is parsed once (fixedURLs) and
// copied into each request: the same URL and Host as http.NewRequest
// makes, and a request's URL changed by middleware changes no other's.
func TestFixedURLsAreCopiesOfNewRequests(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Host+" "+r.URL.String())
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	c, err := NewClient("sk_test_fixed_urls", WithBaseURL(srv.URL+"/v1"))
	require.NoError(t, err)
	fixed := []string{"/webhooks/events/trigger/" + string(EventPaymentCompleted)}
	for _, op := range fixedPathOps {
		fixed = append(fixed, op.PathTemplate)
	}
	for _, path := range fixed {
		want, err := http.NewRequest(http.MethodPost, srv.URL+"/v1"+path, nil)
		require.NoError(t, err)
		got := c.fixedURLs[path]
		require.NotNil(t, got.url, path)
		assert.Equal(t, want.URL, got.url)
		assert.Equal(t, want.Host, got.host)
	}
	assert.Len(t, c.fixedURLs, len(fixedPathOps)+len(knownKinds))
	for path, got := range c.fixedURLs {
		want, err := http.NewRequest(http.MethodPost, srv.URL+"/v1"+path, nil)
		require.NoError(t, err)
		assert.Equal(t, want.URL, got.url, path)
	}
	rewrite := WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		req.URL.Path += "/rewritten"
		return next(req)
	})
	ctx := context.Background()
	_, _ = c.Payments.Confirm(ctx, &PaymentConfirmParams{Reference: "r", QuoteID: "q"}, rewrite)
	_, _ = c.Payments.Confirm(ctx, &PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	host := strings.TrimPrefix(srv.URL, "http://")
	assert.Equal(t, []string{host + " /v1/payments/confirm/rewritten", host + " /v1/payments/confirm"}, paths)
	assert.Equal(t, "/v1/payments/confirm", c.fixedURLs["/payments/confirm"].url.Path)
}
