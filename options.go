package payments

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Default retry settings.
const (
	DefaultMaxRetries   = 2
	DefaultRetryWaitMin = 500 * time.Millisecond
	DefaultRetryWaitMax = 10 * time.Second
)

type clientConfig struct {
	baseURL      string
	httpClient   *http.Client
	maxRetries   int
	retryWaitMin time.Duration
	retryWaitMax time.Duration
	logger       *slog.Logger
	userAgent    string
}

// Option configures a Client. Options are applied in order by NewClient, which
// reports the first invalid one.
type Option func(*clientConfig) error

// WithBaseURL sets the address of the environment to use (production or
// sandbox); the specification publishes no default. It must be https, except
// for loopback hosts (127.0.0.1, ::1, localhost) used in tests. A path prefix
// is kept: "https://host/api" sends recipients to "https://host/api/payments/recipients".
func WithBaseURL(u string) Option {
	return func(c *clientConfig) error { c.baseURL = u; return nil }
}

// WithHTTPClient makes the Client send every attempt through hc, used as given
// (its Transport, Timeout, Jar and redirect policy). The default is a client
// with a connection pool sized for concurrent use and a 60-second timeout per
// attempt.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *clientConfig) error {
		if hc == nil {
			return fmt.Errorf("%w: WithHTTPClient(nil)", ErrInvalidConfig)
		}
		c.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times a failed attempt is retried (default 2;
// 0 disables retries). Only retry-safe calls are retried: see the README.
func WithMaxRetries(n int) Option {
	return func(c *clientConfig) error {
		if n < 0 {
			return fmt.Errorf("%w: WithMaxRetries(%d) is negative", ErrInvalidConfig, n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithRetryWait sets the shortest and the longest wait between attempts
// (defaults 500ms and 10s). The wait doubles from min with jitter; a
// Retry-After header from the service is honoured but never beyond max.
func WithRetryWait(min, max time.Duration) Option {
	return func(c *clientConfig) error {
		if min < 0 || max < min {
			return fmt.Errorf("%w: WithRetryWait(%s, %s) needs 0 <= min <= max", ErrInvalidConfig, min, max)
		}
		c.retryWaitMin, c.retryWaitMax = min, max
		return nil
	}
}

// WithLogger makes the Client log each attempt (method, path, status,
// duration, attempt, stan) at debug level and retries at info level. The API
// key, headers and bodies are never logged. Without it nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *clientConfig) error { c.logger = l; return nil }
}

// WithUserAgent puts your application's product token (for example
// "acme-checkout/2.3") in front of the SDK's own User-Agent.
func WithUserAgent(ua string) Option {
	return func(c *clientConfig) error {
		if strings.ContainsAny(ua, "\r\n") {
			return fmt.Errorf("%w: WithUserAgent contains a line break", ErrInvalidConfig)
		}
		c.userAgent = ua
		return nil
	}
}

type requestConfig struct {
	idempotencyKey string
	header         http.Header
}

// RequestOption configures one call.
type RequestOption func(*requestConfig)

// WithIdempotencyKey sends key as the call's Idempotency-Key instead of a
// random one. Use a key derived from your own record (an order id, say) so
// that a call repeated after a crash or a timeout cannot act twice; the same
// key with a different body is refused by the service. On any call it also
// makes a POST safe to retry.
func WithIdempotencyKey(key string) RequestOption {
	return func(r *requestConfig) { r.idempotencyKey = key }
}

// WithHeader adds a header to the call. It cannot replace the headers the SDK
// owns (Authorization, Content-Type, Accept, User-Agent, Idempotency-Key):
// use WithIdempotencyKey for the last one.
func WithHeader(name, value string) RequestOption {
	return func(r *requestConfig) {
		if r.header == nil {
			r.header = make(http.Header)
		}
		r.header.Add(name, value)
	}
}
