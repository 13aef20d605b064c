package payments

// This file is an internal test: it checks what the options set on the
// Client's unexported parts (the retry layer, the transport).

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/request"
)

const optKey = "sk_test_Opt1onsK3y"

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

func TestDefaultsAndOptionsReachTheRetryLayer(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.Equal(t, defaultMaxRetries, c.retry.MaxAttempts-1)
	assert.Equal(t, 2, c.retry.MaxAttempts-1, "the issue asks for 2 retries by default")
	assert.Equal(t, defaultRetryWaitMin, c.retry.WaitMin)
	assert.Equal(t, defaultRetryWaitMax, c.retry.WaitMax)
	assert.Equal(t, defaultRetryWaitMax, c.shared.MaxPause(), "a 429's pause is bounded by the client's longest wait")
	rc := callForTest(c).Retrying()
	assert.NotNil(t, rc.ErrorHandler, "without an ErrorHandler go-retryablehttp drops the final status and body")
	assert.Nil(t, rc.Logger, "go-retryablehttp's own logger writes every URL to stderr")
	// Each call's go-retryablehttp client carries the call's settings.
	assert.Equal(t, defaultMaxRetries, rc.RetryMax)
	assert.Equal(t, defaultRetryWaitMin, rc.RetryWaitMin)
	assert.Equal(t, defaultRetryWaitMax, rc.RetryWaitMax)
	assert.Equal(t, 10*time.Second, rc.Backoff(time.Second, 10*time.Second, 10, nil), "the back-off doubles up to the call's max")
	require.NotNil(t, c.shared.Budget, "the retry budget is on by default")
	assert.Equal(t, DefaultRetryBudget(), RetryBudget{Tokens: c.shared.Budget.Tokens, RetryCost: c.shared.Budget.RetryCost, TimeoutCost: c.shared.Budget.TimeoutCost, SuccessRefund: c.shared.Budget.SuccessRefund})
	assert.Nil(t, c.shared.Limiter, "no rate limit by default")

	c, err = NewClient(optKey, WithBaseURL("https://api.example.com"),
		WithRetries(RetryPolicy{MaxAttempts: 1}), WithRetries(RetryPolicy{WaitMin: 10 * time.Millisecond, WaitMax: 20 * time.Millisecond}))
	require.NoError(t, err)
	assert.Equal(t, 0, c.retry.MaxAttempts-1)
	assert.Equal(t, 10*time.Millisecond, c.retry.WaitMin)
	assert.Equal(t, 20*time.Millisecond, c.retry.WaitMax)
	assert.Equal(t, 20*time.Millisecond, c.shared.MaxPause())
	rc = callForTest(c).Retrying()
	assert.Equal(t, 0, rc.RetryMax)
	assert.Equal(t, 10*time.Millisecond, rc.RetryWaitMin)
	assert.Equal(t, 20*time.Millisecond, rc.RetryWaitMax)

	// A WaitMin above the WaitMax in force raises it; zero fields keep theirs.
	c, err = NewClient(optKey, WithBaseURL("https://api.example.com"), WithRetries(RetryPolicy{WaitMin: 20 * time.Second}))
	require.NoError(t, err)
	assert.Equal(t, RetryPolicy{MaxAttempts: defaultMaxRetries + 1, WaitMin: 20 * time.Second, WaitMax: 20 * time.Second}, c.retry)
}

// callForTest is a call of c, as Client.do makes it, that is never sent.
func callForTest(c *Client) *request.Call {
	return &request.Call{Shared: c.shared, MaxRetries: c.retry.MaxAttempts - 1, WaitMin: c.retry.WaitMin, WaitMax: c.retry.WaitMax}
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
	hc := c.shared.HTTPClient
	require.NotNil(t, hc)
	assert.NotSame(t, http.DefaultClient, hc)
	tr, ok := c.shared.Transport().(*http.Transport)
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
	assert.Equal(t, defaultMaxRetries, c.retry.MaxAttempts-1)
	assert.Equal(t, 500*time.Millisecond, c.retry.WaitMin)
	assert.Equal(t, 10*time.Second, c.retry.WaitMax)

	// Each client gets its own pool.
	c2, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.NotSame(t, hc, c2.shared.HTTPClient)
	assert.NotSame(t, tr, c2.shared.Transport())
}

func TestCallersHTTPClientIsUsedAsGiven(t *testing.T) {
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(httpmock.NewStringResponder(200,
		`{"success":true,"message":"ok","stan":"s","data":{"id":"x"}}`))
	hc := &http.Client{Transport: mt, Timeout: 7 * time.Second}
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"), WithHTTPClient(hc))
	require.NoError(t, err)
	assert.Same(t, mt, c.shared.Transport(), "attempts go through the caller's transport")
	assert.Equal(t, 7*time.Second, c.shared.HTTPClient.Timeout, "with the caller's timeout, for each attempt")
	assert.Nil(t, c.idle, "Close leaves the caller's transport alone")

	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, mt.GetTotalCallCount())
	assert.Same(t, mt, hc.Transport, "the caller's client is not modified")
	assert.Equal(t, 7*time.Second, hc.Timeout)
	assert.Nil(t, hc.CheckRedirect)
}

func TestDefaultClientDoesNotFollowRedirects(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	hc := callForTest(c).Retrying().HTTPClient
	require.NotNil(t, hc.CheckRedirect)
	assert.ErrorIs(t, hc.CheckRedirect(nil, nil), http.ErrUseLastResponse)
	_, closes := hc.Transport.(interface{ CloseIdleConnections() })
	assert.False(t, closes, "go-retryablehttp must not be able to empty the shared pool")
}
