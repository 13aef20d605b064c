// Package retry holds the SDK's retry policy: which outcomes are retried and
// how long to wait between attempts. It plugs into go-retryablehttp.
package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryableStatus reports whether an HTTP status may succeed when the same
// request is sent again: 408, 409 (the same idempotency key still running),
// 429, 500, 502, 503 and 504. No other 4xx ever is.
func RetryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// RetryableError reports whether a transport error may go away on another
// attempt. Certificate failures will not.
func RetryableError(err error) bool {
	var (
		unknownAuth  x509.UnknownAuthorityError
		hostname     x509.HostnameError
		invalid      x509.CertificateInvalidError
		verification *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknownAuth), errors.As(err, &hostname),
		errors.As(err, &invalid), errors.As(err, &verification):
		return false
	case strings.Contains(err.Error(), "unsupported protocol scheme"):
		return false
	}
	return true
}

// Check decides whether to retry, given the context's state and whether this
// request may be sent twice at all (allowed). It never retries once the
// context has ended, and returns the context's error then.
func Check(ctx context.Context, allowed bool, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if !allowed {
		return false, nil
	}
	if err != nil {
		return RetryableError(err), nil
	}
	return RetryableStatus(resp.StatusCode), nil
}

// Backoff returns how long to wait before attempt number attempt+1 (attempt
// counts from 0). A Retry-After header on resp is honoured within [lo, hi]:
// one below lo (0, or a date already past) waits lo, so a service cannot
// make the client retry at once; one above hi waits hi. Otherwise the wait
// doubles from lo for each attempt, plus up to half of it again at random,
// and never exceeds hi: the first retry waits between lo and 1.5*lo.
func Backoff(lo, hi time.Duration, attempt int, resp *http.Response, now time.Time) time.Duration {
	if resp != nil {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			return min(max(d, lo), hi)
		}
	}
	if lo <= 0 {
		return 0
	}
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	if d > hi {
		d = hi
	}
	// Jitter upwards, so that lo is the shortest wait as documented.
	return min(d+rand.N(d/2+1), hi)
}

// ParseRetryAfter reads a Retry-After value given in seconds or as an HTTP
// date. Negative or unparsable values report false.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}
