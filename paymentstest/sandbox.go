package paymentstest

import (
	"log/slog"
	"time"

	"github.com/shopspring/decimal"
)

// Sandbox holds the settings of a long-running fake that people and programs
// outside Go use, as the payments-sandbox command runs it, and the processing
// delay of the late test values. A zero field leaves its setting as it is
// (its default, or what an earlier WithSandbox gave).
type Sandbox struct {
	// Addr is the address to listen on ("host:port") instead of a random
	// loopback port.
	Addr string
	// Dashboard serves a page of the server's state at /_dashboard/,
	// updated live, with actions that redeliver and trigger events, pause
	// deliveries or settle a payment (docs/sandbox-dashboard.md). It needs
	// no API key, so it answers only loopback clients unless
	// DashboardRemote; it never shows the API key, a webhook secret, a whole
	// signature or personal data whole (an account number shows its last
	// four, an identification number, BVN, email or mobile number
	// "[redacted]"), and refuses actions from another origin
	// (TestDashboardPagesHoldNoSecret, TestDashboardMasksEveryPersonalField,
	// TestDashboardEscapes, TestDashboardRefusesCrossSiteActions).
	Dashboard       bool
	DashboardRemote bool
	// Logger logs every request (method, path, status, stan, idempotency
	// key, injected fault) and every webhook attempt; never the API key or
	// bodies.
	Logger *slog.Logger
	// LogLimit is how many entries each of the logs read by Requests, Events
	// and Deliveries keeps, the oldest going first (default 10000).
	LogLimit int
	// ReadHeaderTimeout (default 10s), ReadTimeout, WriteTimeout and
	// IdleTimeout are those of the server's http.Server. WriteTimeout does
	// not cut waits made on purpose (a Fault's Latency, a deliveries wait).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// WebhookTimeout bounds each delivery attempt (default 10s).
	WebhookTimeout time.Duration
	// WebhookConcurrency is how many deliveries run at once, 1 to 64
	// (default 1).
	WebhookConcurrency int
	// DeliveryDelay holds each event's first attempt this long (wall clock,
	// at most an hour); DeliveryDuplicate delivers each event twice (the
	// second marked Redelivery); DeliveryNewestFirst starts the newest due
	// attempt first (with WebhookConcurrency 1, a strict newest-first order).
	DeliveryDelay       time.Duration
	DeliveryDuplicate   bool
	DeliveryNewestFirst bool
	// BalanceLowThreshold: a payment that leaves a balance below it sends
	// account.balance_low (default 10000.00); NoBalanceLow sends it never.
	BalanceLowThreshold decimal.Decimal
	NoBalanceLow        bool
	// ProcessingDelay is how long, on the wall clock, the server takes to
	// verify a recipient with AccountNumberVerifiesLate or to complete a
	// payment of AmountCompletesLate (default 2 seconds; tests pass a few
	// milliseconds, or an hour to settle it themselves). WaitForDeliveries
	// waits for this work too. It must not be negative.
	ProcessingDelay time.Duration
	// NoAdminAPI leaves the admin API off: paths under /_sandbox/ are then
	// unknown paths, as on the real service, and the other settings apply.
	NoAdminAPI bool
}

// WithSandbox turns the server into a sandbox: it also answers the admin API
// under /_sandbox/ (the routes are in the package documentation; NoAdminAPI
// leaves it off), so that
// code outside Go can do what a Go test does with the server's methods, and
// takes the settings of sb. Admin requests take the same bearer key and
// answer the same envelope as the API, but are never faulted, ignore
// Idempotency-Key and are not in the Requests log. Without WithSandbox,
// paths under /_sandbox/ are unknown paths, as on the real service.
func WithSandbox(sb Sandbox) Option {
	return func(c *config) {
		if !sb.NoAdminAPI {
			withAdminAPI()(c)
		}
		if sb.Addr != "" {
			withAddr(sb.Addr)(c)
		}
		if sb.Dashboard || sb.DashboardRemote {
			withDashboard()(c)
		}
		if sb.DashboardRemote {
			withDashboardRemote()(c)
		}
		if sb.Logger != nil {
			withLogger(sb.Logger)(c)
		}
		if sb.LogLimit != 0 {
			withLogLimit(sb.LogLimit)(c)
		}
		if t := (httpTimeouts{ReadHeader: sb.ReadHeaderTimeout, Read: sb.ReadTimeout,
			Write: sb.WriteTimeout, Idle: sb.IdleTimeout}); t != (httpTimeouts{}) {
			withHTTPTimeouts(t)(c)
		}
		if sb.WebhookTimeout != 0 {
			withWebhookTimeout(sb.WebhookTimeout)(c)
		}
		if sb.WebhookConcurrency != 0 {
			withWebhookConcurrency(sb.WebhookConcurrency)(c)
		}
		if ch := (deliveryChaos{Delay: sb.DeliveryDelay, Duplicate: sb.DeliveryDuplicate,
			NewestFirst: sb.DeliveryNewestFirst}); ch != (deliveryChaos{}) {
			withDeliveryChaos(ch)(c)
		}
		if sb.ProcessingDelay != 0 {
			withProcessingDelay(sb.ProcessingDelay)(c)
		}
		switch {
		case sb.NoBalanceLow:
			withBalanceLowThreshold(decimal.Zero)(c)
		case !sb.BalanceLowThreshold.IsZero():
			withBalanceLowThreshold(sb.BalanceLowThreshold)(c)
		}
	}
}

// withProcessingDelay sets Sandbox.ProcessingDelay.
func withProcessingDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithSandbox: ProcessingDelay(%s) is negative", d)
			return
		}
		c.processingDelay = d
	}
}
