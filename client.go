package payments

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// Client talks to the Payments API. Make one with NewClient and share it: a
// Client is safe for concurrent use, and its settings are its own, so two
// clients with two API keys in one process never interfere.
type Client struct {
	// Recipients creates and edits saved payment destinations.
	Recipients *RecipientsService
	// Payments initiates (quotes) and confirms payments.
	Payments *PaymentsService
	// VirtualAccounts opens accounts that receive money.
	VirtualAccounts *VirtualAccountsService
	// Webhooks triggers test events.
	Webhooks *WebhooksService

	// key is behind a pointer so that printing a Client by value (%+v of
	// *c) shows an address, never the key; see also String and LogValue.
	key       *credentials
	baseURL   string // scheme://host[/prefix], no trailing slash
	userAgent string
	logger    *slog.Logger
	http      *retryablehttp.Client
	// idle closes the idle connections of the transport NewClient made,
	// or is nil when the caller gave its own client.
	idle   interface{ CloseIdleConnections() }
	quotes quoteBook
	now    func() time.Time
}

// credentials hold the API key; never logged, never in an error.
type credentials struct {
	raw    string
	bearer string // "Bearer <key>"
}

// String shows the client's base URL and never its API key.
func (c *Client) String() string { return "payments.Client(" + c.baseURL + ")" }

// GoString is String, so that %#v shows no key either.
func (c *Client) GoString() string { return c.String() }

// LogValue logs the client's base URL and never its API key.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", c.baseURL))
}

// Close closes the idle connections of the transport that NewClient made,
// and does nothing to a client given with WithHTTPClient (its owner closes
// it). Calling it is optional: a long-lived Client never needs it, and a
// program that makes short-lived clients calls it to free their sockets at
// once. The Client stays usable; later calls open new connections.
func (c *Client) Close() error {
	if c.idle != nil {
		c.idle.CloseIdleConnections()
	}
	return nil
}

// NewClient returns a Client that authenticates with apiKey. WithBaseURL is
// required (the specification publishes no default address). It refuses an
// empty key, a missing or unparsable base URL, and a plain-http base URL
// unless its host is loopback: the bearer token is never sent in clear text.
// Every error it returns matches ErrInvalidConfig.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	cfg := clientConfig{
		maxRetries:   DefaultMaxRetries,
		retryWaitMin: DefaultRetryWaitMin,
		retryWaitMax: DefaultRetryWaitMax,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, fmt.Errorf("%w: the API key is empty", ErrInvalidConfig)
	}
	if strings.ContainsFunc(apiKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("%w: the API key contains spaces or control characters", ErrInvalidConfig)
	}
	base, err := parseBaseURL(cfg.baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		key:       &credentials{raw: apiKey, bearer: "Bearer " + apiKey},
		baseURL:   base,
		userAgent: userAgent(cfg.userAgent),
		logger:    cfg.logger,
		now:       time.Now,
	}
	hc := cfg.httpClient
	if hc == nil {
		t := defaultTransport()
		hc, c.idle = &http.Client{Transport: t, Timeout: 60 * time.Second}, t
	}
	c.http = &retryablehttp.Client{
		HTTPClient:   sharedClient(hc),
		Logger:       nil, // go-retryablehttp's own logger writes URLs to stderr
		RetryWaitMin: cfg.retryWaitMin,
		RetryWaitMax: cfg.retryWaitMax,
		RetryMax:     cfg.maxRetries,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			st := stateOf(ctx)
			return retry.Check(ctx, st.retryable, resp, err)
		},
		Backoff: func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
			return retry.Backoff(min, max, attempt, resp, c.now())
		},
		ErrorHandler:   keepLastResponse,
		RequestLogHook: c.onAttempt,
	}
	c.Recipients = &RecipientsService{c}
	c.Payments = &PaymentsService{c}
	c.VirtualAccounts = &VirtualAccountsService{c}
	c.Webhooks = &WebhooksService{c}
	return c, nil
}

// NewClientFromEnv is NewClient with the API key from PAYMENTS_API_KEY and
// the base URL from PAYMENTS_BASE_URL. Options given here override the
// environment.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	if u := os.Getenv("PAYMENTS_BASE_URL"); u != "" {
		opts = append([]Option{WithBaseURL(u)}, opts...)
	}
	return NewClient(os.Getenv("PAYMENTS_API_KEY"), opts...)
}

func parseBaseURL(raw string) (string, error) {
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
		if !isLoopback(u.Hostname()) {
			return "", fmt.Errorf("%w: the base URL %s is plain http and not loopback: the API key would travel in clear text", ErrInvalidConfig, u.Redacted())
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

// defaultTransport pools enough idle connections per host for many
// goroutines (net/http keeps 2) and bounds every phase of an attempt.
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// sharedClient returns a copy of hc (its transport, timeout and cookie jar)
// that the retry layer may use without harming other calls:
//
//   - it follows no redirect, whatever hc's policy: a redirect answers the
//     call as an *APIError, so the bearer token never follows a 3xx to
//     another URL (net/http would resend it to the same host over plain
//     http) and a redirect loop costs one request;
//   - its transport cannot be told to close idle connections: go-retryablehttp
//     closes them whenever a call ends in an error, which would empty the
//     pool every other call shares and multiply new connections during an
//     outage. Client.Close closes them instead.
func sharedClient(hc *http.Client) *http.Client {
	shared := *hc
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	shared.Transport = keepIdle{rt}
	shared.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &shared
}

// keepIdle hides its transport's CloseIdleConnections.
type keepIdle struct{ rt http.RoundTripper }

func (k keepIdle) RoundTrip(r *http.Request) (*http.Response, error) { return k.rt.RoundTrip(r) }

// callState travels in the request context so that the retry hooks, which
// go-retryablehttp shares between all calls, can see each call's own facts.
type callState struct {
	retryable bool // a request that may be sent twice
	attempts  int
	method    string
	path      string
}

type stateKey struct{}

func stateOf(ctx context.Context) *callState {
	if st, ok := ctx.Value(stateKey{}).(*callState); ok {
		return st
	}
	return &callState{}
}

func (c *Client) onAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	st := stateOf(req.Context())
	st.attempts = attempt + 1
	if attempt > 0 && c.logger != nil {
		c.logger.LogAttrs(req.Context(), slog.LevelInfo, "payments: retrying request",
			slog.String("method", st.method), slog.String("path", st.path), slog.Int("attempt", attempt+1))
	}
}

// keepLastResponse runs when go-retryablehttp gives up. It hands back the
// final response with its status and body intact, so the caller gets a full
// *APIError, and passes connection and context errors through.
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil && err != nil && (isContextErr(err)) {
		resp.Body.Close()
		return nil, err
	}
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

func isContextErr(err error) bool {
	return err == context.Canceled || err == context.DeadlineExceeded
}
