package paymentstest

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Defaults of the fake's webhook delivery.
const (
	// defaultWebhookRetryWait is the wait before the first retry of a failed
	// delivery; each later retry waits twice as long (1s, 2s, 4s, 8s).
	defaultWebhookRetryWait = time.Second
	// defaultWebhookTimeout bounds each delivery attempt.
	defaultWebhookTimeout = 10 * time.Second
	// webhookRetryCount is how many times a failed delivery is retried after
	// its first attempt, as the specification says.
	webhookRetryCount = 4
)

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

type config struct {
	addr           string
	apiKey         string
	now            func() time.Time
	webhookURLs    []string
	webhookSecrets []string
	webhookScheme  WebhookScheme
	webhookRetries []time.Duration
	webhookTimeout time.Duration
	rates          map[[2]string]decimal.Decimal
	logger         *slog.Logger
	admin          bool
	logLimit       int
	timeouts       httpTimeouts
	// The dashboard and the delivery engine: dashboard.go, deliveries.go.
	dashboard, dashboardRemote bool
	webhookConcurrency         int
	chaos                      deliveryChaos
	// The test values' settings: testvalues.go and balance.go.
	processingDelay     time.Duration
	balance, balanceLow decimal.Decimal
	// WithDifferences: differences.go.
	differences differences
	err         error
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("paymentstest: "+format, args...)
	}
}

// Option configures a Server. An invalid option makes StartServer return an
// error (and NewServer panic).
type Option func(*config)

// withAddr makes the server listen on addr ("host:port") instead of a random
// loopback port. The payments-sandbox command uses it.
func withAddr(addr string) Option {
	return func(c *config) {
		if strings.TrimSpace(addr) == "" {
			c.fail("WithSandbox: Addr needs an address such as 127.0.0.1:8765")
			return
		}
		c.addr = addr
	}
}

// WithAPIKey makes the server accept key instead of a random JWT-shaped key.
// The key must not be empty or contain spaces or control characters.
func WithAPIKey(key string) Option {
	return func(c *config) {
		if key == "" || strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			c.fail("WithAPIKey needs a non-empty key without spaces or control characters")
			return
		}
		c.apiKey = key
	}
}

// withClock makes the server read the time from now instead of time.Now.
// Advance moves the server's time forward from whatever now returns.
func withClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.fail("WithSandbox: Clock(nil)")
			return
		}
		c.now = now
	}
}

// Webhook is where and how the server delivers its events: the dashboard
// settings of the real service. A zero field leaves the setting as it is
// (its default, or what an earlier WithWebhook gave).
type Webhook struct {
	// URL receives the deliveries: an absolute http or https URL. Without
	// one (or URLs) the server delivers nothing until the admin API
	// (WithSandbox) sets one.
	URL string
	// URLs are several receivers instead of URL (give one or the other, at
	// most 16): the first attempts of deliveries take them in turn, round
	// robin, and each retry goes to the URL after the one its previous
	// attempt went to, so that replicas of a receiver can be tried without
	// a load balancer (see Delivery.URL).
	URLs []string
	// Secrets sign each delivery (give two while rotating: every delivery
	// then carries one signature per secret). Under SchemeStandard they must
	// be whsec_ secrets (webhook.NewStandardSecret makes one; StartServer
	// fails otherwise, without repeating them); without any, the server
	// signs with one of its own.
	Secrets []string
	// Scheme is how deliveries are signed (default SchemePayments).
	Scheme WebhookScheme
	// Retries is the retry schedule of a failed delivery: the wait before
	// each retry, so that a delivery makes 1+len(Retries) attempts at most.
	// The default is 4 retries after 1s, 2s, 4s and 8s; tests pass a
	// millisecond or so. At most 20 waits, each from 0 to an hour.
	// NoRetries makes one attempt only. The admin API changes the schedule
	// at run time.
	Retries   []time.Duration
	NoRetries bool
}

// WithWebhook sets where and how the server delivers its events (see
// Webhook): WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets:
// []string{secret}, Retries: []time.Duration{time.Millisecond}}).
func WithWebhook(w Webhook) Option {
	return func(c *config) {
		if err := checkWebhookURL(w.URL); err != nil {
			c.fail("WithWebhook: %v", err)
			return
		}
		if err := checkWebhookURLs(w.URLs); err != nil {
			c.fail("WithWebhook: URLs: %v", err)
			return
		}
		if w.URL != "" && len(w.URLs) > 0 {
			c.fail("WithWebhook: give URL or URLs, not both")
			return
		}
		if w.Scheme != "" && !w.Scheme.valid() {
			c.fail("WithWebhook: Scheme %q: the scheme is %q or %q", string(w.Scheme), SchemePayments, SchemeStandard)
			return
		}
		if err := checkRetryWaits(w.Retries); err != nil {
			c.fail("WithWebhook: Retries: %v", err)
			return
		}
		switch {
		case w.URL != "":
			c.webhookURLs = []string{w.URL}
		case len(w.URLs) > 0:
			c.webhookURLs = slices.Clone(w.URLs)
		}
		if w.Secrets != nil {
			c.webhookSecrets = slices.Clone(w.Secrets)
		}
		if w.Scheme != "" {
			c.webhookScheme = w.Scheme
		}
		switch {
		case w.NoRetries:
			c.webhookRetries = []time.Duration{}
		case w.Retries != nil:
			c.webhookRetries = slices.Clone(w.Retries)
		}
	}
}

// withWebhookRetryWait sets the wait before the first retry of a failed
// delivery (default defaultWebhookRetryWait); each of the webhookRetryCount
// later retries waits twice as long. Tests pass a millisecond or so. Zero
// retries at once. It replaces the schedule of WithWebhook's Retries, and the
// other way round: the last one given wins.
func withWebhookRetryWait(base time.Duration) Option {
	return func(c *config) {
		if base < 0 {
			c.fail("WithSandbox: WebhookRetryWait(%s) is negative", base)
			return
		}
		c.webhookRetries = doublingWaits(base)
	}
}

// withWebhookTimeout bounds each delivery attempt (default
// defaultWebhookTimeout). A receiver slower than that counts as failed.
func withWebhookTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("WithSandbox: WebhookTimeout(%s) must be positive", d)
			return
		}
		c.webhookTimeout = d
	}
}

// withExchangeRate sets the rate quoted for payments in currency from to
// recipients whose account currency is to (one unit of from buys rate units
// of to). It overrides the built-in table; see the package documentation.
func withExchangeRate(from, to string, rate decimal.Decimal) Option {
	return func(c *config) {
		if !currencyPattern.MatchString(from) || !currencyPattern.MatchString(to) {
			c.fail("WithSandbox: ExchangeRate(%q, %q): currencies are three capital letters", from, to)
			return
		}
		if !rate.IsPositive() {
			c.fail("WithSandbox: ExchangeRate(%q, %q): the rate must be positive", from, to)
			return
		}
		if c.rates == nil {
			c.rates = make(map[[2]string]decimal.Decimal)
		}
		c.rates[[2]string{from, to}] = rate
	}
}

// withAdminAPI makes the server also answer a small admin API under
// adminPrefix ("/_sandbox/"), so that code outside Go (curl, Python, Node)
// can do what a Go test does with the server's methods: move the clock
// (Advance), pay into a virtual account (SimulateIncomingPayment), inject
// and clear faults (InjectFault, ClearFaults), read or change where webhooks
// go (WebhookURL, SetWebhookURL) and the retry schedule (SetWebhookRetries),
// read or wait for the webhook delivery log (Deliveries, WaitForDeliveries),
// and deliver events again (Redeliver, RedeliverFailed). The routes are
// listed in the package documentation.
//
// It is off by default: without it, paths under /_sandbox/ are unknown
// paths, as they are on the real service. Admin requests take the same
// bearer key and answer the same envelope as the API, but are never faulted
// or slowed down, ignore Idempotency-Key and are not in the Requests log.
// The payments-sandbox command turns it on.
func withAdminAPI() Option {
	return func(c *config) { c.admin = true }
}

// withLogger makes the server log every request (method, path, status, stan,
// idempotency key, injected fault) and every webhook attempt. The API key
// and bodies are never logged.
func withLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// withLogLimit sets how many entries each log of the server keeps: the
// requests (Requests), the events (Events) and the webhook deliveries
// (Deliveries) each hold their last n entries, and the oldest goes when a
// new one comes (default defaultLogLimit). Recording stays O(1) per entry
// past the limit. Memory grows with use, up to n entries per log: a test
// that checks every request of a long run sets n above what it sends. n
// must be positive.
func withLogLimit(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.fail("WithSandbox: LogLimit(%d) must be positive", n)
			return
		}
		c.logLimit = n
	}
}

// httpTimeouts are timeouts of the server's http.Server (see its fields of
// the same names). A zero field keeps the fake's default: a ReadHeader of
// 10 seconds, and no Read, Write or Idle timeout, as with httptest. A
// long-running server reachable by others sets them all, as the
// payments-sandbox command does.
//
// Write does not cut waits the fake makes on purpose: a request slowed down
// by SetLatency or a faultLatency, and POST /_sandbox/deliveries/wait, get
// Write on top of their wait.
type httpTimeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included.
	Read time.Duration
	// Write bounds the time from the end of the request's headers to the
	// end of the answer.
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request.
	Idle time.Duration
}

// withHTTPTimeouts sets the timeouts of the server's http.Server. Negative
// durations are refused.
func withHTTPTimeouts(t httpTimeouts) Option {
	return func(c *config) {
		if t.ReadHeader < 0 || t.Read < 0 || t.Write < 0 || t.Idle < 0 {
			c.fail("WithSandbox: HTTPTimeouts(%+v): timeouts must not be negative", t)
			return
		}
		c.timeouts = t
	}
}
