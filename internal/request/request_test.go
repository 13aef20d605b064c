package request

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTripper is an http.RoundTripper made of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// send runs c: it POSTs body with c's key, then reads and closes the
// answer's body, as payments.Client does.
func send(t *testing.T, c *Call, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/x", nil)
	require.NoError(t, err)
	req.Header["Idempotency-Key"] = c.KeyHeader()
	resp, err := c.Do(req, []byte(body))
	if resp != nil {
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	c.End()
	return resp, err
}

// A Call that Reuse readies runs as a new one: the new call's settings and
// key, no state of the call before (its attempts, waits, failure, wire),
// and the same go-retryablehttp client and hooks, made once.
func TestReuseKeepsOnlyWhatTheCallMadeForItself(t *testing.T) {
	var keys, bodies []string
	s := (&Shared{HTTPClient: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		keys, bodies = append(keys, r.Header.Get("Idempotency-Key")), append(bodies, string(b))
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})}}).Init(time.Second)
	c := &Call{Shared: s, Method: http.MethodPost, Key: "k1", Retryable: true, MaxRetries: 3, WaitMin: time.Millisecond, WaitMax: time.Second}
	_, err := send(t, c, `{"n":1}`)
	require.NoError(t, err)
	require.True(t, c.Reusable())
	kept, wire, retrying := c.kept, c.wire, c.Retrying()
	assert.Equal(t, 3, retrying.RetryMax)
	c.Waited = time.Minute

	c.Reuse(Call{Shared: s, Method: http.MethodPost, Key: "k2", Retryable: true, MaxRetries: 1, WaitMin: 2 * time.Millisecond, WaitMax: time.Second})
	assert.Same(t, kept, c.kept, "the go-retryablehttp client and hooks are made once")
	assert.Nil(t, c.wire, "what net/http may still read is never reused")
	assert.Zero(t, c.Attempts())
	assert.Zero(t, c.Waited)
	_, err = send(t, c, `{"n":2}`)
	require.NoError(t, err)
	assert.NotSame(t, wire, c.wire)
	assert.Equal(t, []string{"k1", "k2"}, keys)
	assert.Equal(t, []string{`{"n":1}`, `{"n":2}`}, bodies)
	assert.Equal(t, 1, c.Attempts())
	rc := c.Retrying()
	assert.Same(t, retrying, rc)
	assert.Equal(t, 1, rc.RetryMax)
	assert.Equal(t, 2*time.Millisecond, rc.RetryWaitMin)
	assert.NotNil(t, rc.CheckRetry)
	assert.NotNil(t, rc.PrepareRetry)
}

// A call one of whose attempts ended in a transport error is not reusable,
// even when a retry then succeeded: net/http may still be writing that
// attempt's request.
func TestATransportErrorMakesACallNotReusable(t *testing.T) {
	fail := 1
	s := (&Shared{HTTPClient: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if fail > 0 {
			fail--
			return nil, errors.New("connection reset")
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})}}).Init(time.Second)
	s.SetClock(nil, func(context.Context, time.Duration) error { return nil })
	c := &Call{Shared: s, Method: http.MethodPost, Key: "k", Retryable: true, MaxRetries: 1, WaitMin: time.Nanosecond, WaitMax: time.Nanosecond}
	resp, err := send(t, c, `{}`)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, 2, c.Attempts())
	assert.False(t, c.Reusable())

	c = &Call{Shared: s, Method: http.MethodPost, Key: "k", Retryable: true}
	_, err = send(t, c, `{}`)
	require.NoError(t, err)
	assert.True(t, c.Reusable(), "a call whose every attempt was answered is")
}
