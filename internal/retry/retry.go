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
	if d, ok := ServerWait(resp, now); ok {
		return min(max(d, lo), hi)
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

// ServerWait is how long resp asks the client to wait before it sends
// again: its Retry-After, on any status; else, on a 429, what the IETF's
// RateLimit header fields draft defines in seconds from now: RateLimit-Reset
// (an integer), or the t= parameter of RateLimit ("default";r=0;t=30).
// X-RateLimit-Reset and X-RateLimit-Retry-After are not read: one service
// means a Unix time by them, another seconds, a third milliseconds, and a
// guess could make every call wait its longest (see WaitHeader).
func ServerWait(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
		return d, true
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if d, ok := deltaSeconds(resp.Header.Get("RateLimit-Reset")); ok {
		return d, true
	}
	return deltaSeconds(rateLimitT(resp.Header.Get("RateLimit")))
}

// WaitHeader names the header that carries a 429's wait when it is not the
// Retry-After assumed (docs/assumptions.md): the first of RateLimit-Reset,
// RateLimit (with a t= parameter), X-RateLimit-Reset and
// X-RateLimit-Retry-After that h has; "" when h has a Retry-After, or none
// of them. read says whether ServerWait reads it.
func WaitHeader(h http.Header) (name string, read bool) {
	if h.Get("Retry-After") != "" {
		return "", false
	}
	switch {
	case h.Get("RateLimit-Reset") != "":
		_, ok := deltaSeconds(h.Get("RateLimit-Reset"))
		return "RateLimit-Reset", ok
	case rateLimitT(h.Get("RateLimit")) != "":
		_, ok := deltaSeconds(rateLimitT(h.Get("RateLimit")))
		return "RateLimit", ok
	case h.Get("X-RateLimit-Reset") != "":
		return "X-RateLimit-Reset", false
	case h.Get("X-RateLimit-Retry-After") != "":
		return "X-RateLimit-Retry-After", false
	}
	return "", false
}

// rateLimitT returns the value of the t= parameter of a RateLimit header
// ("default";r=0;t=30, or r=0, t=30 of earlier drafts), or "".
func rateLimitT(v string) string {
	for len(v) > 0 {
		var part string
		part, v, _ = strings.Cut(v, ";")
		for _, p := range strings.Split(part, ",") {
			name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(name), "t") {
				return strings.TrimSpace(value)
			}
		}
	}
	return ""
}

// deltaSeconds reads a whole number of seconds up to a day: a larger
// number is more likely a Unix time than a wait.
func deltaSeconds(v string) (time.Duration, bool) {
	secs, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil || secs > uint64(24*time.Hour/time.Second) {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
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
