// Command payments-sandbox runs the paymentstest fake of the Payments API as
// a standalone HTTP server, for trying the API or testing an integration
// from outside Go (curl, another language, a Docker compose file).
//
// Usage:
//
//	payments-sandbox [-addr 127.0.0.1:8765] [-api-key KEY]
//	                 [-webhook-url http://localhost:8080/webhooks|none]
//	                 [-webhook-scheme payments|standard]
//	                 [-webhook-secret SECRET] [-webhook-retry-wait 1s]
//	                 [-webhook-retries 1s,2s,4s,8s|none]
//	                 [-balance 1000000000000.00] [-balance-low-threshold 10000.00]
//	                 [-processing-delay 2s] [-admin=true] [-quiet]
//	                 [-dashboard=true] [-dashboard-remote] [-webhook-concurrency 1]
//	                 [-deliver-late 2s] [-deliver-twice] [-deliver-newest-first]
//	                 [-differ quote-flat,html-errors,...]
//
// It prints its URL and API key, and the lines to export so that the SDK
// (payments.NewClientFromEnv) and the examples use it:
//
//	export PAYMENTS_BASE_URL=http://127.0.0.1:8765
//	export PAYMENTS_API_KEY=eyJhbGciOi...
//	export PAYMENTS_WEBHOOK_SECRET=pssec_...
//
// Paste them into the sandbox's shell too: PAYMENTS_API_KEY,
// PAYMENTS_WEBHOOK_SECRET and PAYMENTS_WEBHOOK_SCHEME, when set, are used
// instead of new values (a flag given wins over its variable), so that a
// restarted sandbox keeps the key the SDK uses and the secret a running
// receiver verifies with. The sandbox says which variables it reused, and
// refuses a secret that does not fit the scheme (a Payments-Signature hex
// secret with PAYMENTS_WEBHOOK_SCHEME=standard) without printing it.
//
// Every event is POSTed to -webhook-url, signed with -webhook-secret (a
// random one when none is given). The default URL is where
// examples/webhook-receiver listens (http://localhost:8080/webhooks), so the
// two meet without configuration: start the receiver with the printed
// PAYMENTS_WEBHOOK_SECRET. -webhook-url none (or "") turns deliveries off;
// the admin API's PUT /_sandbox/webhook-url changes the URL at run time.
// Several URLs, comma-separated (-webhook-url
// http://localhost:8081/webhooks,http://localhost:8082/webhooks), are
// replicas of a receiver, tried without a load balancer: the first attempts
// of deliveries go to each in turn, round robin, and a retry goes to the
// URL after the one that failed. The admin API takes them as {"urls":
// [...]}.
//
// A failed delivery is retried 4 times, after 1s, 2s, 4s and 8s.
// -webhook-retry-wait scales that schedule (it doubles from the wait
// given); -webhook-retries sets any schedule: the waits before each retry,
// comma-separated Go durations, or none for no retry. The admin API's GET
// and PUT /_sandbox/webhook-retries read and change it at run time.
//
// -webhook-scheme says how deliveries are signed: payments (the default)
// puts the Payments-Signature header on them; standard signs them as
// Standard Webhooks do (headers webhook-id, webhook-timestamp,
// webhook-signature), with a whsec_ secret: -webhook-secret must then be
// one (webhook.NewStandardSecret makes them), or the sandbox makes one.
// With standard it also prints
//
//	export PAYMENTS_WEBHOOK_SCHEME=standard
//
// which examples/webhook-receiver reads to verify with
// webhook.NewStandardVerifier. The admin API's GET /_sandbox/webhook-url
// reports the scheme.
//
// The test values of paymentstest work here too: account numbers and
// amounts that fail, are rejected or succeed late, and a balance per
// currency that payments draw down (-balance), with account.balance_low
// below -balance-low-threshold. -processing-delay sets how long the late
// ones take. The table is in the README and the paymentstest package
// documentation.
//
// The admin API of paymentstest.WithSandbox is on (-admin=false turns it
// off): routes under /_sandbox/ that move the clock, pay into a virtual
// account, inject faults, set the webhook URL and retry schedule, read or
// wait for webhook deliveries, and deliver events again, with the same API
// key. GET /webhooks/events lists every event, as the SDK's
// Webhooks.ListEvents assumes the service does. The command prints curl lines to start
// from; the routes are listed in the paymentstest package documentation.
// Requests and webhook attempts are logged to standard error unless -quiet
// is set (never the API key or the webhook secret). State lives in memory
// and is lost when the command stops. SIGINT or SIGTERM stops it gracefully:
// requests being handled are finished first.
//
// The dashboard (-dashboard=false turns it off) is a web page at the root
// of the same port, printed at start (payments open prints it too): the
// recipients, payments, virtual accounts, balances, and every event with
// each delivery attempt, live, with buttons to redeliver, trigger, pause
// deliveries, change the webhook URL and retries, move the clock and settle
// a payment. It answers this machine only; -dashboard-remote opens it to
// others (it has no login), and the sandbox then says so. docs/sandbox-dashboard.md
// shows it.
//
// Each delivery retries on its own schedule, so a receiver that fails one
// event does not hold up the next; at most -webhook-concurrency attempts
// are in flight. -deliver-late, -deliver-twice and -deliver-newest-first
// make deliveries misbehave the way real senders do (PUT
// /_sandbox/delivery-chaos changes them at run time).
//
// -differ makes the sandbox differ from the SDK's assumptions in the named
// ways (paymentstest.WithDifferences lists them: confirm-path, quote-flat,
// quote-renamed, html-errors, completed-at, status-processing,
// signature-header, list-cursor, minor-units, numeric-codes, field-errors,
// test-marker), as a real service might: payments doctor against it names
// each difference (docs/when-the-service-differs.md).
//
// The server has the timeouts of examples/webhook-receiver's (5 s to read
// a request's headers, 15 s the whole request, 30 s to answer, 60 s for an
// idle keep-alive connection), so idle or slow clients cannot hold
// connections open.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
	"github.com/shopspring/decimal"
)

const (
	// defaultAddr is where the sandbox listens by default.
	defaultAddr = "127.0.0.1:8765"
	// defaultWebhookURL is where examples/webhook-receiver listens by
	// default.
	defaultWebhookURL = "http://localhost:8080/webhooks"
)

// Defaults of the flags, as paymentstest has them.
const (
	defaultRetryWait       = time.Second
	defaultBalance         = "1000000000000.00"
	defaultBalanceLow      = "10000.00"
	defaultProcessingDelay = 2 * time.Second
	retryCount             = 4 // retries after a failed delivery, the wait doubling each time
	dashboardPath          = "/_dashboard/"
	adminPrefix            = "/_sandbox/"
)

// httpTimeouts are the timeouts of the sandbox's http.Server (the fields of
// paymentstest.Sandbox of the same names).
type httpTimeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// serverTimeouts are those of examples/webhook-receiver's http.Server.
func serverTimeouts() httpTimeouts {
	return httpTimeouts{
		ReadHeader: 5 * time.Second,
		Read:       15 * time.Second,
		Write:      30 * time.Second,
		Idle:       60 * time.Second,
	}
}

// doublingWaits is the retry schedule that -webhook-retry-wait sets: base,
// then twice the wait before, for each retry.
func doublingWaits(base time.Duration) []time.Duration {
	waits := make([]time.Duration, retryCount)
	for i := range waits {
		waits[i] = base << i
	}
	return waits
}

// dashboardURL is where srv serves its dashboard, or "" when it does not.
func dashboardURL(srv *paymentstest.Server, on bool) string {
	if !on {
		return ""
	}
	return srv.URL() + dashboardPath
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, serverTimeouts())
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "payments-sandbox:", err)
		os.Exit(1)
	}
}

// run starts the sandbox, prints how to reach it to stdout, and serves
// until ctx ends. getenv reads the environment (os.Getenv); tests pass
// short timeouts and an environment of their own.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, timeouts httpTimeouts) error {
	fs := flag.NewFlagSet("payments-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultAddr, "`address` to listen on (port 0 picks a free port)")
	apiKey := fs.String("api-key", "", "API `key` to accept (default: $"+envAPIKey+", else a random JWT-shaped key)")
	hookURL := fs.String("webhook-url", defaultWebhookURL,
		"`URL` to deliver webhook events to, where examples/webhook-receiver listens by default; several, comma-separated, take the deliveries round robin (a retry goes to the next one); none turns deliveries off")
	hookScheme := fs.String("webhook-scheme", string(paymentstest.SchemePayments),
		"how webhooks are signed: payments (the Payments-Signature header) or standard (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature); default: $"+envScheme+", else payments")
	hookSecret := fs.String("webhook-secret", "",
		"webhook signing `secret` (default: $"+envSecret+", else a random one; a whsec_ secret with -webhook-scheme standard)")
	retryWait := fs.Duration("webhook-retry-wait", defaultRetryWait,
		"wait before the first retry of a failed webhook delivery; it doubles for each of the 4 retries")
	retries := fs.String("webhook-retries", "",
		"`waits` before each retry of a failed webhook delivery, comma-separated (1s,2s,4s,8s), or none; replaces -webhook-retry-wait")
	balance := fs.String("balance", defaultBalance, "the merchant's `amount` in each currency at start; confirmed payments draw it down")
	balanceLow := fs.String("balance-low-threshold", defaultBalanceLow,
		"account.balance_low is sent when a payment leaves a balance below this `amount` (0: never)")
	delay := fs.Duration("processing-delay", defaultProcessingDelay,
		"how long the test values that succeed late take (account number "+paymentstest.AccountNumberVerifiesLate+
			", amount "+paymentstest.AmountCompletesLate+")")
	admin := fs.Bool("admin", true, "serve the admin API under "+adminPrefix+" (clock, incoming payments, faults, deliveries)")
	quiet := fs.Bool("quiet", false, "do not log requests and webhook attempts")
	dash := fs.Bool("dashboard", true, "serve the dashboard, a web page of the sandbox's state and deliveries, at / of the same port")
	dashRemote := fs.Bool("dashboard-remote", false,
		"let other machines use the dashboard (it has no login); without it, it answers this machine only")
	concurrency := fs.Int("webhook-concurrency", 1,
		"how many webhook delivery attempts may be in flight at once (1 keeps first attempts in event order)")
	var chaos deliveryFlags
	fs.DurationVar(&chaos.Delay, "deliver-late", 0, "hold each event's first delivery attempt this long, as a slow sender would")
	fs.BoolVar(&chaos.Duplicate, "deliver-twice", false, "deliver every event twice (the same event id)")
	fs.BoolVar(&chaos.NewestFirst, "deliver-newest-first", false, "among the deliveries due, send the newest first (with -deliver-late: out of order)")
	differ := fs.String("differ", "", "differ from the SDK's assumptions in these `ways`, comma-separated (see paymentstest.WithDifferences; payments doctor names each)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	set := setFlags(fs)
	creds, err := resolveCredentials(getenv, set, *apiKey, *hookScheme, *hookSecret)
	if err != nil {
		return err
	}
	if *retryWait < 0 {
		return fmt.Errorf("-webhook-retry-wait %s: give a wait of 0 or more, such as 1s", *retryWait)
	}
	startBalance, err := parseAmount("balance", *balance)
	if err != nil {
		return err
	}
	lowThreshold, err := parseAmount("balance-low-threshold", *balanceLow)
	if err != nil {
		return err
	}
	waits := doublingWaits(*retryWait)
	if set["webhook-retries"] {
		if set["webhook-retry-wait"] {
			return errors.New("give -webhook-retries or -webhook-retry-wait, not both")
		}
		if waits, err = parseRetries(*retries); err != nil {
			return err
		}
	}
	if strings.EqualFold(strings.TrimSpace(*hookURL), "none") {
		*hookURL = ""
	}
	if creds.scheme == paymentstest.SchemeStandard && len(creds.secrets) == 0 {
		// The secret printed in the export lines, so made here.
		secret, err := webhook.NewStandardSecret()
		if err != nil {
			return err
		}
		creds.secrets = []string{secret}
	}
	sb := paymentstest.Sandbox{
		Addr:                *addr,
		NoAdminAPI:          !*admin,
		Dashboard:           *dash || *dashRemote,
		DashboardRemote:     *dashRemote,
		ReadHeaderTimeout:   timeouts.ReadHeader,
		ReadTimeout:         timeouts.Read,
		WriteTimeout:        timeouts.Write,
		IdleTimeout:         timeouts.Idle,
		WebhookConcurrency:  *concurrency,
		DeliveryDelay:       chaos.Delay,
		DeliveryDuplicate:   chaos.Duplicate,
		DeliveryNewestFirst: chaos.NewestFirst,
		BalanceLowThreshold: lowThreshold,
		NoBalanceLow:        lowThreshold.IsZero(),
		ProcessingDelay:     *delay,
	}
	if *delay == 0 {
		sb.ProcessingDelay = time.Nanosecond // at once: Sandbox's zero keeps the default
	}
	if !*quiet {
		sb.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	opts := []paymentstest.Option{
		paymentstest.WithSandbox(sb),
		paymentstest.WithWebhook(paymentstest.Webhook{URLs: splitList(*hookURL), Secrets: creds.secrets,
			Scheme: creds.scheme, Retries: waits, NoRetries: len(waits) == 0}),
		paymentstest.WithBalance(startBalance),
	}
	if creds.apiKey != "" {
		opts = append(opts, paymentstest.WithAPIKey(creds.apiKey))
	}
	if ways := splitList(*differ); len(ways) > 0 {
		opts = append(opts, paymentstest.WithDifferences(ways...))
	}
	srv, err := paymentstest.StartServer(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()

	printBanner(stdout, srv, creds, *hookURL, startBalance, lowThreshold)
	if ways := splitList(*differ); len(ways) > 0 {
		fmt.Fprintf(stdout, "Differing from the SDK's assumptions on purpose (-differ): %s; payments doctor names each\n\n", strings.Join(ways, ", "))
	}
	printDashboard(stdout, dashboardURL(srv, sb.Dashboard), *addr, *dashRemote, chaos)
	if *admin {
		printAdminHelp(stdout, srv.URL(), srv.APIKey(), slices.Contains(creds.reused, envAPIKey))
	}
	fmt.Fprintf(stdout, "Press Ctrl+C to stop.\n")

	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(stdout, "payments-sandbox: stopped")
	return nil
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// parseAmount reads an amount flag: a decimal number, 0 or more.
func parseAmount(name, v string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(strings.TrimSpace(v))
	if err != nil || d.IsNegative() {
		return decimal.Decimal{}, fmt.Errorf("-%s %q: give an amount of 0 or more, such as 5000.00", name, v)
	}
	return d, nil
}

// parseRetries reads -webhook-retries: comma-separated Go durations, or
// none (or "") for no retry.
func parseRetries(v string) ([]time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "none") {
		return nil, nil
	}
	var waits []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("-webhook-retries %q: give waits such as 1s,2s,4s,8s, or none", v)
		}
		waits = append(waits, d)
	}
	return waits, nil
}

// splitList splits a comma-separated flag, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
