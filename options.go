package payments

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// The retry settings of a Client without WithMaxRetries or WithRetryWait.
const (
	defaultMaxRetries   = 2
	defaultRetryWaitMin = 500 * time.Millisecond
	defaultRetryWaitMax = 10 * time.Second
)

type clientConfig struct {
	baseURL        string
	plainHTTP      bool
	httpClient     *http.Client
	maxRetries     int
	retryWaitMin   time.Duration
	retryWaitMax   time.Duration
	attemptTimeout time.Duration
	logger         *slog.Logger
	userAgent      string
	middleware     []Middleware
	observers      []OperationObserver
	budget         *RetryBudget // nil: no retry budget
	limiter        *rate.Limiter
}

// hooks are the observers, then the logger's: one path for everything that
// watches operations, the logger innermost.
func (c *clientConfig) hooks() []hook {
	hooks := make([]hook, 0, len(c.observers)+1)
	for _, o := range c.observers {
		hooks = append(hooks, observerHook(o))
	}
	if c.logger != nil {
		hooks = append(hooks, logHook(c.logger))
	}
	return hooks
}

// Option configures a Client. Options are applied in order by NewClient, which
// reports the first invalid one.
type Option interface{ applyClient(*clientConfig) error }

type optionFunc func(*clientConfig) error

func (f optionFunc) applyClient(c *clientConfig) error { return f(c) }

// RequestOption configures one call. Every RequestOption is also an
// Option: WithMiddleware, WithAttemptTimeout, WithMaxRetries and
// WithRetryWait given to NewClient apply to every call, given to one call
// to that call. WithIdempotencyKey, WithHeader and WithBodyField belong to
// one call: NewClient refuses them (ErrInvalidConfig). An Option that is
// not a RequestOption (WithBaseURL, ...) cannot be given to a call.
type RequestOption interface {
	Option
	applyRequest(*requestConfig)
}

// callOnly is a RequestOption that only a call takes.
type callOnly struct {
	name string
	f    func(*requestConfig)
}

func (o callOnly) applyClient(*clientConfig) error {
	return fmt.Errorf("%w: %s applies to one call: pass it to the call, not to NewClient", ErrInvalidConfig, o.name)
}

func (o callOnly) applyRequest(r *requestConfig) { o.f(r) }

type bothOption struct {
	client  func(*clientConfig) error
	request func(*requestConfig)
}

func (o bothOption) applyClient(c *clientConfig) error { return o.client(c) }

func (o bothOption) applyRequest(r *requestConfig) { o.request(r) }

// WithBaseURL sets the address of the environment to use (production or
// sandbox); the specification publishes no default. It must be https, except
// for loopback hosts (127.0.0.1, ::1, localhost) used in tests. A path prefix
// is kept: "https://host/api" sends recipients to "https://host/api/payments/recipients".
func WithBaseURL(u string) Option {
	return optionFunc(func(c *clientConfig) error { c.baseURL = u; return nil })
}

// WithHTTPClient makes the Client send every attempt through hc, used as given
// (its Transport, Timeout, Jar and redirect policy). The default is a client
// with a connection pool sized for concurrent use and a 60-second timeout per
// attempt.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *clientConfig) error {
		if hc == nil {
			return fmt.Errorf("%w: WithHTTPClient(nil)", ErrInvalidConfig)
		}
		c.httpClient = hc
		return nil
	})
}

// WithMaxRetries sets how many times a failed attempt is retried (default 2;
// 0 disables retries). Only retry-safe calls are retried: see the README.
// Given to NewClient it applies to every call, given to one call to that
// call; a negative n is an error (ErrInvalidConfig from NewClient, a
// *ValidationError from a call, which then sends nothing).
func WithMaxRetries(n int) RequestOption {
	return bothOption{
		client: func(c *clientConfig) error {
			if n < 0 {
				return fmt.Errorf("%w: WithMaxRetries(%d) is negative", ErrInvalidConfig, n)
			}
			c.maxRetries = n
			return nil
		},
		request: func(r *requestConfig) { r.maxRetries = &n },
	}
}

// WithRetryWait sets the shortest and the longest wait between attempts
// (defaults 500ms and 10s). The first retry waits between min and 1.5*min,
// each later one twice as long (with the same jitter), never more than max; a
// Retry-After header from the service is honoured within min and max (a
// Retry-After of 0 waits min).
// Given to NewClient it applies to every call (and the client's max also
// bounds the pause a 429 imposes on all calls), given to one call to that
// call. It needs 0 <= min <= max.
func WithRetryWait(min, max time.Duration) RequestOption {
	return bothOption{
		client: func(c *clientConfig) error {
			if min < 0 || max < min {
				return fmt.Errorf("%w: WithRetryWait(%s, %s) needs 0 <= min <= max", ErrInvalidConfig, min, max)
			}
			c.retryWaitMin, c.retryWaitMax = min, max
			return nil
		},
		request: func(r *requestConfig) { r.retryWait = &[2]time.Duration{min, max} },
	}
}

// WithLogger makes the Client log one line per call ("payments: request"): at
// debug level on success and at warning level on failure, with operation,
// method, path (no query), attempts, duration (a string such as "130.884ms"),
// status and stan when an answer came, idempotency_key when one was sent, and
// error. Each retry adds an info line ("payments: retrying request"). The API
// key, headers and bodies are never logged. Without it nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *clientConfig) error { c.logger = l; return nil })
}

// WithUserAgent puts your application's product token (for example
// "acme-checkout/2.3") in front of the SDK's own User-Agent.
func WithUserAgent(ua string) Option {
	return optionFunc(func(c *clientConfig) error {
		if strings.ContainsAny(ua, "\r\n") {
			return fmt.Errorf("%w: WithUserAgent contains a line break", ErrInvalidConfig)
		}
		c.userAgent = ua
		return nil
	})
}

// WithInsecurePlainHTTP lets the base URL be plain http on a host that is not
// loopback, such as http://sandbox:8765 between containers on a private
// network. The API key then travels in clear text to anyone on that network:
// use it only for a sandbox or a fake, never with a live key.
func WithInsecurePlainHTTP() Option {
	return optionFunc(func(c *clientConfig) error { c.plainHTTP = true; return nil })
}

func checkAPIKey(apiKey string) error {
	if strings.TrimSpace(apiKey) == "" {
		return fmt.Errorf("%w: the API key is empty", ErrInvalidConfig)
	}
	if strings.ContainsFunc(apiKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("%w: the API key contains spaces or control characters", ErrInvalidConfig)
	}
	return nil
}

func parseBaseURL(raw string, plainHTTP bool) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("%w: no base URL: pass WithBaseURL or set PAYMENTS_BASE_URL", ErrInvalidConfig)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: the base URL is not an absolute URL", ErrInvalidConfig)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: the base URL %s must not carry credentials, a query or a fragment", ErrInvalidConfig, u.Redacted())
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) && !plainHTTP {
			return "", fmt.Errorf("%w: the base URL %s is plain http and not loopback: the API key would travel in clear text (WithInsecurePlainHTTP allows it, for sandboxes only)", ErrInvalidConfig, u.Redacted())
		}
	default:
		return "", fmt.Errorf("%w: the base URL scheme must be https", ErrInvalidConfig)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func userAgent(prefix string) string {
	ua := fmt.Sprintf("payments-go/%s (%s; %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if prefix != "" {
		ua = prefix + " " + ua
	}
	return ua
}

type requestConfig struct {
	idempotencyKey string
	keyGiven       bool // WithIdempotencyKey was passed, even with ""
	header         http.Header
	middleware     []Middleware
	attemptTimeout time.Duration
	maxRetries     *int              // WithMaxRetries on this call
	retryWait      *[2]time.Duration // WithRetryWait on this call: min, max
	bodyFields     []bodyField       // WithBodyField, in the order given
}

// WithIdempotencyKey sends key as the call's Idempotency-Key instead of a
// random one. Use a key derived from your own record (an order id, say) so
// that a call repeated after a crash or a timeout cannot act twice; the same
// key with a different body is refused by the service. On any call it also
// makes a POST safe to retry.
//
// An empty or blank key is a *ValidationError and nothing is sent: a call
// repeated to learn an unknown outcome must carry the key of the first one,
// never a fresh random one. To let the SDK make a key, leave the option out.
func WithIdempotencyKey(key string) RequestOption {
	return callOnly{"WithIdempotencyKey", func(r *requestConfig) { r.idempotencyKey, r.keyGiven = key, true }}
}

// WithHeader adds a header to the call. It cannot replace the headers the SDK
// owns (Authorization, Content-Type, Accept, User-Agent, Idempotency-Key):
// use WithIdempotencyKey for the last one.
func WithHeader(name, value string) RequestOption {
	return callOnly{"WithHeader", func(r *requestConfig) {
		if r.header == nil {
			r.header = make(http.Header)
		}
		r.header.Add(name, value)
	}}
}

// ownedHeaders are the headers the SDK sets on every attempt: WithHeader
// cannot set them and middleware cannot remove or replace them.
var ownedHeaders = map[string]bool{
	"Authorization": true, "Content-Type": true, "Accept": true,
	"User-Agent": true, "Idempotency-Key": true, "Content-Length": true, "Host": true,
}

// requestOptions applies opts and checks the result: every problem is
// reported at once, and nothing is sent.
func requestOptions(opts []RequestOption) (requestConfig, error) {
	if len(opts) == 0 {
		return requestConfig{}, nil
	}
	var rc requestConfig
	for _, o := range opts {
		o.applyRequest(&rc)
	}
	var v validator
	switch k := rc.idempotencyKey; {
	case rc.keyGiven && strings.TrimSpace(k) == "":
		v.add("Idempotency-Key", "is empty: pass the stored key of the call to repeat, or leave WithIdempotencyKey out for a new one")
	case len(k) > 255 || !printableASCII(k):
		v.add("Idempotency-Key", "must be at most 255 printable ASCII characters")
	}
	if rc.attemptTimeout < 0 {
		v.add("WithAttemptTimeout", "must be positive")
	}
	if rc.maxRetries != nil && *rc.maxRetries < 0 {
		v.add("WithMaxRetries", "must not be negative")
	}
	if w := rc.retryWait; w != nil && (w[0] < 0 || w[1] < w[0]) {
		v.add("WithRetryWait", "needs 0 <= min <= max")
	}
	checkBodyFields(&v, rc.bodyFields)
	for name, values := range rc.header {
		if ownedHeaders[name] || !validHeaderName(name) {
			v.add("header "+name, "cannot be set with WithHeader")
		}
		for _, val := range values {
			if strings.ContainsAny(val, "\r\n\x00") {
				v.add("header "+name, "value contains a line break")
			}
		}
	}
	return rc, v.err()
}
