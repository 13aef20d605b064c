package payments

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultTransportSettings pins the documented values of the default
// transport (README, "Retries and idempotency"; RELIABILITY.md), which
// TestDefaultTransportPoolsConnections only requires to be set.
func TestDefaultTransportSettings(t *testing.T) {
	c, err := NewClient(optKey, WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	hc := c.http.HTTPClient
	tr, ok := hc.Transport.(*http.Transport)
	require.True(t, ok, "default transport is %T", hc.Transport)
	assert.Equal(t, 60*time.Second, hc.Timeout, "whole attempt")
	assert.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)
	assert.Equal(t, 60*time.Second, tr.ResponseHeaderTimeout)
	assert.Equal(t, 128, tr.MaxIdleConnsPerHost)
	assert.Equal(t, 90*time.Second, tr.IdleConnTimeout)
	assert.NotNil(t, tr.Proxy, "HTTPS_PROXY and NO_PROXY are honoured")
	assert.Equal(t, DefaultMaxRetries, c.http.RetryMax)
	assert.Equal(t, 500*time.Millisecond, c.http.RetryWaitMin)
	assert.Equal(t, 10*time.Second, c.http.RetryWaitMax)
}
