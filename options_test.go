package payments

// This file is an internal test: it reaches the Client's unexported parts,
// and exports a few hooks (below) to the external tests of package
// payments_test.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetClockForTest makes c read the time from now. Call it before c is used.
func SetClockForTest(c *Client, now func() time.Time) { c.now = now }

// RetryLoggerForTest returns the Logger of the go-retryablehttp client under c.
func RetryLoggerForTest(c *Client) any { return c.http.Logger }

// RetryBackoffForTest returns the back-off c's retry layer would wait before
// attempt number attempt+1 after resp.
func RetryBackoffForTest(c *Client, attempt int, resp *http.Response) time.Duration {
	return c.http.Backoff(c.http.RetryWaitMin, c.http.RetryWaitMax, attempt, resp)
}

const optKey = "sk_test_Opt1onsK3y"

func TestNewClientRefusesBadConfig(t *testing.T) {
	cases := []struct {
		name string
		key  string
		opts []Option
		want string // part of the message
	}{
		{"empty key", "", []Option{WithBaseURL("https://api.example")}, "API key is empty"},
		{"blank key", "   ", []Option{WithBaseURL("https://api.example")}, "API key is empty"},
		{"key with space", "sk_test abc", []Option{WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with newline", "sk_test\nabc", []Option{WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with trailing newline", "sk_test_abc\n", []Option{WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with tab", "sk\ttest", []Option{WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"no base URL", optKey, nil, "no base URL"},
		{"empty base URL", optKey, []Option{WithBaseURL("")}, "no base URL"},
		{"unparsable base URL", optKey, []Option{WithBaseURL("https://api example.com:port/")}, "not an absolute URL"},
		{"relative base URL", optKey, []Option{WithBaseURL("/v1")}, "not an absolute URL"},
		{"host only", optKey, []Option{WithBaseURL("api.example.com")}, "not an absolute URL"},
		{"http non-loopback", optKey, []Option{WithBaseURL("http://api.example.com")}, "plain http"},
		{"http private address", optKey, []Option{WithBaseURL("http://10.0.0.5:8080")}, "plain http"},
		{"http loopback look-alike", optKey, []Option{WithBaseURL("http://localhost.evil.example")}, "plain http"},
		{"ftp", optKey, []Option{WithBaseURL("ftp://api.example.com")}, "scheme must be https"},
		{"credentials in URL", optKey, []Option{WithBaseURL("https://user:pw@api.example.com")}, "credentials"},
		{"query in URL", optKey, []Option{WithBaseURL("https://api.example.com/?x=1")}, "query"},
		{"nil http client", optKey, []Option{WithBaseURL("https://api.example.com"), WithHTTPClient(nil)}, "WithHTTPClient(nil)"},
		{"negative retries", optKey, []Option{WithBaseURL("https://api.example.com"), WithMaxRetries(-1)}, "WithMaxRetries(-1)"},
		{"negative min wait", optKey, []Option{WithBaseURL("https://api.example.com"), WithRetryWait(-time.Second, time.Second)}, "min <= max"},
		{"max below min", optKey, []Option{WithBaseURL("https://api.example.com"), WithRetryWait(2*time.Second, time.Second)}, "min <= max"},
		{"user agent with newline", optKey, []Option{WithBaseURL("https://api.example.com"), WithUserAgent("acme\r\nX-Evil: 1")}, "line break"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.key, tc.opts...)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
			if tc.key != "" && strings.TrimSpace(tc.key) != "" {
				assert.NotContains(t, err.Error(), tc.key)
			}
			assert.NotContains(t, err.Error(), "pw@", "credentials of the base URL are not echoed")
		})
	}
}

func TestNewClientAcceptsHTTPSAndLoopback(t *testing.T) {
	for _, u := range []string{
		"https://api.example.com",
		"https://api.example.com/v1/",
		"http://127.0.0.1",
		"http://127.0.0.1:8080",
		"http://127.5.6.7:9000",
		"http://localhost",
		"http://LOCALHOST:3000",
		"http://[::1]",
		"http://[::1]:8443/prefix",
	} {
		t.Run(u, func(t *testing.T) {
			c, err := NewClient(optKey, WithBaseURL(u))
			require.NoError(t, err)
			assert.False(t, strings.HasSuffix(c.baseURL, "/"), c.baseURL)
		})
	}
}

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

func TestDefaultsAndOptionsReachTheRetryLayer(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxRetries, c.http.RetryMax)
	assert.Equal(t, 2, c.http.RetryMax, "the issue asks for 2 retries by default")
	assert.Equal(t, DefaultRetryWaitMin, c.http.RetryWaitMin)
	assert.Equal(t, DefaultRetryWaitMax, c.http.RetryWaitMax)
	assert.NotNil(t, c.http.ErrorHandler, "without an ErrorHandler go-retryablehttp drops the final status and body")

	c, err = NewClient(optKey, WithBaseURL("https://api.example.com"),
		WithMaxRetries(0), WithRetryWait(10*time.Millisecond, 20*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, 0, c.http.RetryMax)
	assert.Equal(t, 10*time.Millisecond, c.http.RetryWaitMin)
	assert.Equal(t, 20*time.Millisecond, c.http.RetryWaitMax)
}

func TestUserAgent(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c.userAgent, "payments-go/"+Version+" ("), c.userAgent)

	c, err = NewClient(optKey, WithBaseURL("https://api.example.com"), WithUserAgent("acme-checkout/2.3"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c.userAgent, "acme-checkout/2.3 payments-go/"+Version+" ("), c.userAgent)
}

func TestDefaultTransportPoolsConnections(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	hc := c.http.HTTPClient
	require.NotNil(t, hc)
	assert.NotSame(t, http.DefaultClient, hc)
	tr, ok := hc.Transport.(attemptTransport).rt.(*http.Transport)
	require.True(t, ok, "default transport is %T", hc.Transport)
	assert.NotSame(t, http.DefaultTransport, tr, "the shared default transport must not be mutated or used")
	assert.Same(t, tr, c.idle, "Close closes the idle connections of the transport NewClient made")
	assert.Equal(t, 60*time.Second, hc.Timeout, "whole attempt")
	assert.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)
	assert.Equal(t, 60*time.Second, tr.ResponseHeaderTimeout)
	assert.Equal(t, 128, tr.MaxIdleConnsPerHost)
	assert.GreaterOrEqual(t, tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
	assert.Equal(t, 90*time.Second, tr.IdleConnTimeout)
	assert.NotNil(t, tr.Proxy, "HTTPS_PROXY and NO_PROXY are honoured")
	assert.NotNil(t, tr.DialContext)
	assert.Equal(t, DefaultMaxRetries, c.http.RetryMax)
	assert.Equal(t, 500*time.Millisecond, c.http.RetryWaitMin)
	assert.Equal(t, 10*time.Second, c.http.RetryWaitMax)

	// Each client gets its own pool.
	c2, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.NotSame(t, hc, c2.http.HTTPClient)
}

func TestCallersHTTPClientIsUsedAsGiven(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(httpmock.NewStringResponder(200,
		`{"success":true,"message":"ok","stan":"s","data":{"id":"x"}}`))
	hc := &http.Client{Transport: mt, Timeout: 7 * time.Second}
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"), WithHTTPClient(hc))
	require.NoError(t, err)
	used := c.http.HTTPClient
	assert.Same(t, mt, used.Transport.(attemptTransport).rt, "attempts go through the caller's transport")
	assert.Equal(t, 7*time.Second, used.Timeout, "with the caller's timeout")
	assert.Nil(t, c.idle, "Close leaves the caller's transport alone")

	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, mt.GetTotalCallCount())
	assert.Same(t, mt, hc.Transport, "the caller's client is not modified")
	assert.Equal(t, 7*time.Second, hc.Timeout)
	assert.Nil(t, hc.CheckRedirect)
}

func TestWithHeaderCannotOverrideAuthorization(t *testing.T) {
	mt := httpmock.NewMockTransport()
	var auth []string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		auth = append(auth, req.Header.Values("Authorization")...)
		return httpmock.NewStringResponse(200, `{"success":true,"data":{}}`), nil
	})
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"), WithHTTPClient(&http.Client{Transport: mt}))
	require.NoError(t, err)

	for _, name := range []string{"Authorization", "authorization", "AUTHORIZATION"} {
		_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil, WithHeader(name, "Bearer someone-else"))
		var verr *ValidationError
		require.True(t, errors.As(err, &verr), "%s: %v", name, err)
		assert.True(t, errors.Is(err, ErrInvalidParams))
	}
	assert.Zero(t, mt.GetTotalCallCount())

	// A harmless header goes through, and the SDK's own Authorization stays.
	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil, WithHeader("X-Request-Id", "req-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Bearer " + optKey}, auth)
}

func TestDefaultClientDoesNotFollowRedirects(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	require.NotNil(t, c.http.HTTPClient.CheckRedirect)
	assert.ErrorIs(t, c.http.HTTPClient.CheckRedirect(nil, nil), http.ErrUseLastResponse)
}
