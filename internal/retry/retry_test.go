package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryableStatus(t *testing.T) {
	retryable := map[int]bool{408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 504: true}
	for code := 100; code < 600; code++ {
		assert.Equal(t, retryable[code], RetryableStatus(code), "status %d", code)
	}
}

func TestRetryableError(t *testing.T) {
	assert.True(t, RetryableError(errors.New("connection reset by peer")))
	assert.True(t, RetryableError(&url.Error{Op: "Post", URL: "https://x", Err: errors.New("EOF")}))
	assert.True(t, RetryableError(fmt.Errorf("dial: %w", errors.New("i/o timeout"))))

	for _, err := range []error{
		&url.Error{Op: "Post", URL: "https://x", Err: x509.UnknownAuthorityError{}},
		x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"},
		x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired},
		&url.Error{Op: "Post", URL: "https://x", Err: &tls.CertificateVerificationError{Err: errors.New("bad")}},
		errors.New(`unsupported protocol scheme "ftp"`),
	} {
		assert.False(t, RetryableError(err), "%v", err)
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code} }

	ok, err := Check(ctx, true, resp(503), nil)
	assert.True(t, ok)
	assert.NoError(t, err)

	ok, err = Check(ctx, true, resp(400), nil)
	assert.False(t, ok)
	assert.NoError(t, err)

	ok, err = Check(ctx, true, resp(200), nil)
	assert.False(t, ok)
	assert.NoError(t, err)

	ok, err = Check(ctx, true, nil, errors.New("connection refused"))
	assert.True(t, ok)
	assert.NoError(t, err)

	ok, _ = Check(ctx, false, resp(503), nil)
	assert.False(t, ok, "a request that may not be sent twice is never retried")
	ok, _ = Check(ctx, false, nil, errors.New("connection refused"))
	assert.False(t, ok)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ok, err = Check(cctx, true, resp(503), nil)
	assert.False(t, ok)
	assert.ErrorIs(t, err, context.Canceled)

	dctx, dcancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer dcancel()
	ok, err = Check(dctx, true, nil, errors.New("timeout"))
	assert.False(t, ok)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestBackoffExponentialWithJitter(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, 2 * time.Second
	now := time.Now()
	for attempt := 0; attempt < 12; attempt++ {
		d := lo << attempt
		if d > hi || attempt > 8 {
			d = hi
		}
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			got := Backoff(lo, hi, attempt, nil, now)
			require.GreaterOrEqual(t, got, d, "attempt %d: never below lo, doubling", attempt)
			require.LessOrEqual(t, got, min(d+d/2, hi), "attempt %d", attempt)
			seen[got] = true
		}
		if d < hi {
			assert.Greater(t, len(seen), 1, "attempt %d: the wait is jittered", attempt)
		}
	}
}

func TestBackoffCapAndEdgeCases(t *testing.T) {
	now := time.Now()
	assert.Equal(t, time.Duration(0), Backoff(0, time.Second, 3, nil, now))
	for i := 0; i < 100; i++ {
		got := Backoff(time.Second, time.Second, 50, nil, now)
		assert.Equal(t, time.Second, got, "min == max: exactly that")
	}
	// A huge attempt number does not overflow into a negative wait.
	got := Backoff(time.Millisecond, time.Hour, 1000, nil, now)
	assert.Positive(t, got)
	assert.LessOrEqual(t, got, time.Hour)
}

func TestBackoffHonoursRetryAfterUpToMax(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	withRA := func(v string) *http.Response {
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {v}}}
	}
	assert.Equal(t, 3*time.Second, Backoff(time.Millisecond, 10*time.Second, 0, withRA("3"), now))
	assert.Equal(t, 10*time.Second, Backoff(time.Millisecond, 10*time.Second, 0, withRA("3600"), now))
	assert.Equal(t, time.Millisecond, Backoff(time.Millisecond, 10*time.Second, 0, withRA("0"), now))
	assert.Equal(t, 7*time.Second, Backoff(time.Millisecond, 10*time.Second, 0, withRA(now.Add(7*time.Second).Format(http.TimeFormat)), now))
	assert.Equal(t, 10*time.Second, Backoff(time.Millisecond, 10*time.Second, 0, withRA(now.Add(time.Hour).Format(http.TimeFormat)), now))

	// A Retry-After below the minimum wait (0, or a date already past) waits
	// exactly the minimum, never less: the service cannot make the client
	// retry at once.
	for _, v := range []string{"0", "1", now.Add(-time.Hour).Format(http.TimeFormat), now.Format(http.TimeFormat)} {
		for attempt := range 3 {
			assert.Equal(t, 2*time.Second, Backoff(2*time.Second, 10*time.Second, attempt, withRA(v), now), "Retry-After %q, attempt %d", v, attempt)
		}
	}
	assert.Equal(t, time.Duration(0), Backoff(0, 10*time.Second, 0, withRA("0"), now), "a minimum of 0 allows no wait")

	// Garbage or a negative value falls back to the exponential wait.
	for _, v := range []string{"soon", "-5", ""} {
		got := Backoff(100*time.Millisecond, 10*time.Second, 0, withRA(v), now)
		assert.GreaterOrEqual(t, got, 100*time.Millisecond, v)
		assert.LessOrEqual(t, got, 150*time.Millisecond, v)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"99999999999", 24 * time.Hour, true},
		{strconv.FormatInt(1<<62, 10), 24 * time.Hour, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Sat, 01 Mar 2025 10:00:30 GMT", 30 * time.Second, true},
		{"Saturday, 01-Mar-25 10:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Sat Mar  1 10:00:30 2025", 30 * time.Second, true},         // ANSI C
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},       // in the past: retry now
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"2025-03-01T10:00:30Z", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ParseRetryAfter(tc.in, now)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestServerWaitAndWaitHeader: beside Retry-After (any status), a 429's
// RateLimit-Reset and RateLimit t= are read as seconds; the X- headers, a
// value that is not whole seconds up to a day (a Unix time, milliseconds),
// and any of them on another status are not. WaitHeader names the header a
// 429 without Retry-After carries its wait in, and whether it is read.
func TestServerWaitAndWaitHeader(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		status   int
		header   http.Header
		wait     time.Duration
		ok       bool
		named    string
		readable bool
	}{
		{"Retry-After", 429, http.Header{"Retry-After": {"3"}, "Ratelimit-Reset": {"9"}}, 3 * time.Second, true, "", false},
		{"Retry-After on a 503", 503, http.Header{"Retry-After": {"3"}}, 3 * time.Second, true, "", false},
		{"RateLimit-Reset", 429, http.Header{"Ratelimit-Reset": {" 7 "}}, 7 * time.Second, true, "RateLimit-Reset", true},
		{"RateLimit-Reset 0", 429, http.Header{"Ratelimit-Reset": {"0"}}, 0, true, "RateLimit-Reset", true},
		{"RateLimit-Reset on a 503", 503, http.Header{"Ratelimit-Reset": {"7"}}, 0, false, "RateLimit-Reset", true},
		{"RateLimit-Reset a Unix time", 429, http.Header{"Ratelimit-Reset": {"1740823200"}}, 0, false, "RateLimit-Reset", false},
		{"RateLimit-Reset a fraction", 429, http.Header{"Ratelimit-Reset": {"1.5"}}, 0, false, "RateLimit-Reset", false},
		{"RateLimit-Reset negative", 429, http.Header{"Ratelimit-Reset": {"-4"}}, 0, false, "RateLimit-Reset", false},
		{"RateLimit t=", 429, http.Header{"Ratelimit": {`"default";r=0;t=30`}}, 30 * time.Second, true, "RateLimit", true},
		{"RateLimit t= of an earlier draft", 429, http.Header{"Ratelimit": {`limit=100, remaining=0, t=12`}}, 12 * time.Second, true, "RateLimit", true},
		{"RateLimit without t=", 429, http.Header{"Ratelimit": {`"default";r=0`}}, 0, false, "", false},
		{"RateLimit t= not seconds", 429, http.Header{"Ratelimit": {`"default";r=0;t=soon`}}, 0, false, "RateLimit", false},
		{"X-RateLimit-Reset", 429, http.Header{"X-Ratelimit-Reset": {"30"}}, 0, false, "X-RateLimit-Reset", false},
		{"X-RateLimit-Retry-After", 429, http.Header{"X-Ratelimit-Retry-After": {"30"}}, 0, false, "X-RateLimit-Retry-After", false},
		{"none", 429, http.Header{"X-Ratelimit-Remaining": {"0"}}, 0, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.status, Header: tc.header}
			wait, ok := ServerWait(resp, now)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.wait, wait)
			named, readable := WaitHeader(tc.header)
			assert.Equal(t, tc.named, named)
			assert.Equal(t, tc.readable, readable)
			if ok {
				assert.Equal(t, min(max(tc.wait, time.Second), 10*time.Second), Backoff(time.Second, 10*time.Second, 0, resp, now), "the back-off honours it within its bounds")
			}
		})
	}
	_, ok := ServerWait(nil, now)
	assert.False(t, ok)
}
