package payments

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/paymentsapi/payments-go/internal/loopback"
)

// The retry settings of a Client without WithRetries.
const (
	defaultMaxRetries   = 2
	defaultRetryWaitMin = 500 * time.Millisecond
	defaultRetryWaitMax = 10 * time.Second
)

type clientConfig struct {
	baseURL    string
	plainHTTP  bool
	httpClient *http.Client
	retry      RetryPolicy // every field set: the defaults, then WithRetries
	logger     *slog.Logger
	userAgent  string
	middleware []Middleware
	observers  []OperationObserver
	budget     *RetryBudget // nil: no retry budget
	limiter    *rate.Limiter
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
// Option: WithMiddleware and WithRetries given to NewClient apply to every
// call, given to one call to that call. WithIdempotencyKey, WithHeader and WithBodyField belong to
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

// RetryPolicy is how calls retry. A zero field leaves its setting as it is:
// given to NewClient, the default; given to one call, the client's.
type RetryPolicy struct {
	// MaxAttempts is how many attempts a call makes at most, the first
	// included (default 3: two retries); 1 makes no retry. Only retry-safe
	// calls are retried: see the README.
	MaxAttempts int
	// WaitMin and WaitMax are the shortest and the longest wait between
	// attempts (defaults 500ms and 10s). The first retry waits between
	// WaitMin and 1.5*WaitMin, each later one twice as long (with the same
	// jitter), never more than WaitMax; a Retry-After header from the
	// service is honoured within WaitMin and WaitMax (a Retry-After of 0
	// waits WaitMin). The client's WaitMax also bounds the pause a 429
	// imposes on all calls. A WaitMin above the WaitMax in force raises
	// WaitMax to it, unless both are given.
	WaitMin, WaitMax time.Duration
	// AttemptTimeout bounds each HTTP attempt, from sending the request to
	// reading the whole answer; an attempt that runs out is retried like a
	// dropped connection. The context you pass bounds the whole call, all
	// attempts and the waits between them. By default an attempt is bounded
	// by the http.Client's Timeout: 60 s for the default one.
	AttemptTimeout time.Duration
}

// check reports what is wrong with p, or "".
func (p RetryPolicy) check() string {
	switch {
	case p.MaxAttempts < 0:
		return "MaxAttempts must not be negative (1 makes no retry)"
	case p.WaitMin < 0 || p.WaitMax < 0 || p.AttemptTimeout < 0:
		return "durations must not be negative (0 keeps the setting)"
	case p.WaitMax > 0 && p.WaitMin > p.WaitMax:
		return "needs WaitMin <= WaitMax"
	}
	return ""
}

// merge returns base with the non-zero fields of p.
func (p RetryPolicy) merge(base RetryPolicy) RetryPolicy {
	if p.MaxAttempts > 0 {
		base.MaxAttempts = p.MaxAttempts
	}
	if p.WaitMin > 0 {
		base.WaitMin = p.WaitMin
	}
	if p.WaitMax > 0 {
		base.WaitMax = p.WaitMax
	}
	if p.AttemptTimeout > 0 {
		base.AttemptTimeout = p.AttemptTimeout
	}
	return base
}

// over returns the policy in force, base, with the non-zero fields of p; a
// WaitMin above base's WaitMax raises it when p gives no WaitMax.
func (p RetryPolicy) over(base RetryPolicy) RetryPolicy {
	r := p.merge(base)
	if p.WaitMax == 0 && r.WaitMax < r.WaitMin {
		r.WaitMax = r.WaitMin
	}
	return r
}

// WithRetries sets how calls retry (see RetryPolicy; zero fields keep their
// setting): WithRetries(payments.RetryPolicy{MaxAttempts: 1}) makes no
// retry. Given to NewClient it applies to every call, given to one call to
// that call. An invalid policy is an error (ErrInvalidConfig from
// NewClient, a *ValidationError from a call, which then sends nothing).
func WithRetries(p RetryPolicy) RequestOption {
	return bothOption{
		client: func(c *clientConfig) error {
			if msg := p.check(); msg != "" {
				return fmt.Errorf("%w: WithRetries(%+v): %s", ErrInvalidConfig, p, msg)
			}
			c.retry = p.over(c.retry)
			return nil
		},
		request: func(r *requestConfig) {
			if msg := p.check(); msg != "" && r.retryErr == "" {
				r.retryErr = msg
			}
			r.retry = p.merge(r.retry)
			r.retryGiven = true
		},
	}
}

// WithLogger makes the Client log one line per call ("payments: request"): at
// debug level on success and at warning level on failure, with operation,
// method, path (no query), attempts, duration (a string such as "130.884ms"),
// status and stan when an answer came, idempotency_key when one was sent, and
// error. Each retry adds an info line ("payments: retrying request"). The
// first time the Client meets each surprise (an answer the SDK does not
// assume: see Surprise) it adds a warning line with its kind and detail.
// The API key, headers and bodies are never logged.
//
// Without it (or with a nil logger) only the surprises' warnings are logged,
// to slog.Default() as it is when the surprise is met, once per Client per
// kind and detail (at most 256 of them): a Client with no logger still tells
// you that the service differs from what the SDK assumes, before it costs
// anything. To drop every line, surprises included, give a logger that
// discards: WithLogger(slog.New(slog.DiscardHandler)); observers
// (WithObserver, paymentsotel) still get every surprise in
// OperationResult.Surprises. Tests: TestSurpriseWarnsOnceOnSlogDefault,
// TestDiscardingLoggerSilencesSurprises, TestSurpriseWarnsOnWithLoggerInstead.
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
		if !loopback.Host(u.Hostname()) && !plainHTTP {
			return "", fmt.Errorf("%w: the base URL %s is plain http and not loopback: the API key would travel in clear text (WithInsecurePlainHTTP allows it, for sandboxes only)", ErrInvalidConfig, u.Redacted())
		}
	default:
		return "", fmt.Errorf("%w: the base URL scheme must be https", ErrInvalidConfig)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
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
	retry          RetryPolicy // WithRetries on this call: its non-zero fields
	retryGiven     bool
	retryErr       string      // what is wrong with a WithRetries of this call
	bodyFields     []bodyField // WithBodyField, in the order given
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

// WithMiddleware adds middleware that sees every HTTP attempt; see
// Middleware for what it can read and change. Given to NewClient it wraps
// every call; given to one call, that call. Client middleware runs first, in
// the order given (the first is the outermost), then the call's own, and the
// last one given is the closest to the network.
func WithMiddleware(mw ...Middleware) RequestOption {
	return bothOption{
		client:  func(c *clientConfig) error { c.middleware = append(c.middleware, mw...); return nil },
		request: func(r *requestConfig) { r.middleware = append(r.middleware, mw...) },
	}
}

// WithObserver makes the Client call obs at the start of every operation:
// tracing and metrics (see the paymentsotel package). Several observers
// nest in the order given: the first sees the operation first and its end
// last. A failure found before sending (invalid params or options) is not an
// operation and reaches no observer.
func WithObserver(obs OperationObserver) Option {
	return optionFunc(func(c *clientConfig) error {
		if obs != nil {
			c.observers = append(c.observers, obs)
		}
		return nil
	})
}

// WithRateLimit makes the Client send at most perSecond requests a second on
// average, in bursts of at most burst, over all its calls: each attempt,
// retries included, waits for its turn (a token bucket, from
// golang.org/x/time/rate). Off by default: the specification publishes no
// limit. A wait ends when the call's context does; a call whose deadline
// would pass before its turn fails at once, with a *TransportError matching
// context.DeadlineExceeded, and nothing sent. perSecond must be positive
// (math.Inf(1) for no limit) and burst at least 1.
func WithRateLimit(perSecond float64, burst int) Option {
	return optionFunc(func(c *clientConfig) error {
		if math.IsNaN(perSecond) || perSecond <= 0 || burst < 1 {
			return fmt.Errorf("%w: WithRateLimit(%v, %d) needs a positive rate and a burst of at least 1", ErrInvalidConfig, perSecond, burst)
		}
		lim := rate.Limit(perSecond)
		if math.IsInf(perSecond, 1) {
			lim = rate.Inf
		}
		c.limiter = rate.NewLimiter(lim, burst)
		return nil
	})
}

// RetryBudget sets a Client's retry budget: a bucket of tokens, shared by all
// its calls, that each retry spends and successful calls refill. While the
// service answers, successes keep the bucket full and retries go on as
// usual; during an outage the bucket empties after a bounded number of
// retries, and from then on a call that would retry fails at once (its
// error matches ErrRetryBudgetExhausted) instead of adding load to a
// service that is down. Start from DefaultRetryBudget and change what you
// need.
type RetryBudget struct {
	// Tokens is the bucket's capacity, and what it holds when the Client
	// is made (at least 1).
	Tokens int
	// RetryCost is what a retry after an error status (429, 5xx, ...) or a
	// failed connection spends.
	RetryCost int
	// TimeoutCost is what a retry after a timed-out attempt spends: it is
	// dearer, since a timeout held the service's resources the whole time.
	TimeoutCost int
	// SuccessRefund is what a call that succeeds at its first attempt puts
	// back. A call that succeeds on a retry puts back that retry's cost
	// instead. The bucket never holds more than Tokens.
	SuccessRefund int
}

// DefaultRetryBudget returns the budget every Client has unless
// WithRetryBudget says otherwise: 500 tokens, 5 per retry, 10 per retry
// after a timeout, 1 back per success (the AWS SDK's standard retry mode).
func DefaultRetryBudget() RetryBudget {
	// A fresh client may make 100 retries after errors (50 after
	// timeouts) before it has to earn more, and earns one retry back per
	// five calls that succeed at once.
	return RetryBudget{Tokens: 500, RetryCost: 5, TimeoutCost: 10, SuccessRefund: 1}
}

// WithRetryBudget replaces the Client's retry budget (DefaultRetryBudget);
// WithRetryBudget(nil) turns it off, so that every call makes all the
// retries its RetryPolicy allows whatever the others do. The costs must not
// be negative nor above Tokens, and Tokens must be at least 1.
func WithRetryBudget(b *RetryBudget) Option {
	return optionFunc(func(c *clientConfig) error {
		if b == nil {
			c.budget = nil
			return nil
		}
		if b.Tokens < 1 || b.RetryCost < 0 || b.TimeoutCost < 0 || b.SuccessRefund < 0 ||
			b.RetryCost > b.Tokens || b.TimeoutCost > b.Tokens {
			return fmt.Errorf("%w: WithRetryBudget(%+v) needs Tokens >= 1 and costs from 0 to Tokens", ErrInvalidConfig, *b)
		}
		cp := *b
		c.budget = &cp
		return nil
	})
}
