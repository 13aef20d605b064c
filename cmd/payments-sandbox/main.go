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
//	                 [-admin=true] [-quiet]
//
// It prints its URL and API key, and the lines to export so that the SDK
// (payments.NewClientFromEnv) and the examples use it:
//
//	export PAYMENTS_BASE_URL=http://127.0.0.1:8765
//	export PAYMENTS_API_KEY=eyJhbGciOi...
//	export PAYMENTS_WEBHOOK_SECRET=whsec_...
//
// Every event is POSTed to -webhook-url, signed with -webhook-secret (a
// random one when none is given). The default URL is where
// examples/webhook-receiver listens (http://localhost:8080/webhooks), so the
// two meet without configuration: start the receiver with the printed
// PAYMENTS_WEBHOOK_SECRET. -webhook-url none (or "") turns deliveries off;
// the admin API's PUT /_sandbox/webhook-url changes the URL at run time.
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
// The admin API of paymentstest.WithAdminAPI is on (-admin=false turns it
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
// The server has the timeouts of examples/webhook-receiver's (5 s to read
// a request's headers, 15 s the whole request, 30 s to answer, 60 s for an
// idle keep-alive connection), so idle or slow clients cannot hold
// connections open.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
)

const (
	// defaultAddr is where the sandbox listens by default.
	defaultAddr = "127.0.0.1:8765"
	// defaultWebhookURL is where examples/webhook-receiver listens by
	// default.
	defaultWebhookURL = "http://localhost:8080/webhooks"
)

// serverTimeouts are those of examples/webhook-receiver's http.Server.
func serverTimeouts() paymentstest.HTTPTimeouts {
	return paymentstest.HTTPTimeouts{
		ReadHeader: 5 * time.Second,
		Read:       15 * time.Second,
		Write:      30 * time.Second,
		Idle:       60 * time.Second,
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, serverTimeouts())
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "payments-sandbox:", err)
		os.Exit(1)
	}
}

// run starts the sandbox, prints how to reach it to stdout, and serves
// until ctx ends. Tests pass short timeouts.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, timeouts paymentstest.HTTPTimeouts) error {
	fs := flag.NewFlagSet("payments-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultAddr, "`address` to listen on (port 0 picks a free port)")
	apiKey := fs.String("api-key", "", "API `key` to accept (default: a random JWT-shaped key)")
	hookURL := fs.String("webhook-url", defaultWebhookURL,
		"`URL` to deliver webhook events to, where examples/webhook-receiver listens by default; none turns deliveries off")
	hookScheme := fs.String("webhook-scheme", string(paymentstest.SchemePayments),
		"how webhooks are signed: payments (the Payments-Signature header) or standard (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)")
	hookSecret := fs.String("webhook-secret", "", "webhook signing `secret` (default: a random one; a whsec_ secret with -webhook-scheme standard)")
	retryWait := fs.Duration("webhook-retry-wait", paymentstest.DefaultWebhookRetryWait,
		"wait before the first retry of a failed webhook delivery; it doubles for each of the 4 retries")
	retries := fs.String("webhook-retries", "",
		"`waits` before each retry of a failed webhook delivery, comma-separated (1s,2s,4s,8s), or none; replaces -webhook-retry-wait")
	admin := fs.Bool("admin", true, "serve the admin API under "+paymentstest.AdminPrefix+" (clock, incoming payments, faults, deliveries)")
	quiet := fs.Bool("quiet", false, "do not log requests and webhook attempts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see -help)", fs.Arg(0))
	}

	scheme := paymentstest.WebhookScheme(strings.ToLower(strings.TrimSpace(*hookScheme)))
	if scheme != paymentstest.SchemePayments && scheme != paymentstest.SchemeStandard {
		return fmt.Errorf("-webhook-scheme %q: use payments (the Payments-Signature header) or standard (Standard Webhooks)", *hookScheme)
	}

	opts := []paymentstest.Option{
		paymentstest.WithAddr(*addr),
		paymentstest.WithWebhookScheme(scheme),
		paymentstest.WithWebhookRetryWait(*retryWait),
		paymentstest.WithHTTPTimeouts(timeouts),
	}
	if set := setFlags(fs); set["webhook-retries"] {
		if set["webhook-retry-wait"] {
			return errors.New("give -webhook-retries or -webhook-retry-wait, not both")
		}
		waits, err := parseRetries(*retries)
		if err != nil {
			return err
		}
		opts = append(opts, paymentstest.WithWebhookRetries(waits...))
	}
	if *apiKey != "" {
		opts = append(opts, paymentstest.WithAPIKey(*apiKey))
	}
	if strings.EqualFold(strings.TrimSpace(*hookURL), "none") {
		*hookURL = ""
	}
	// A secret even without a URL: the admin API can set one later. Under
	// the standard scheme the server makes a whsec_ one itself.
	var secrets []string
	switch {
	case *hookSecret != "":
		secrets = []string{*hookSecret}
	case scheme == paymentstest.SchemePayments:
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		secrets = []string{"whsec_" + hex.EncodeToString(b)}
	}
	opts = append(opts, paymentstest.WithWebhook(*hookURL, secrets...))
	if *admin {
		opts = append(opts, paymentstest.WithAdminAPI())
	}
	if !*quiet {
		opts = append(opts, paymentstest.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))))
	}
	srv, err := paymentstest.StartServer(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	secret := srv.WebhookSecrets()[0] // the one given, or made by the server

	fmt.Fprintf(stdout, "payments-sandbox: a fake Payments API; its state lives in memory and is lost on exit.\n\n")
	fmt.Fprintf(stdout, "  URL:      %s\n", srv.URL())
	fmt.Fprintf(stdout, "  API key:  %s\n", srv.APIKey())
	if *hookURL != "" {
		fmt.Fprintf(stdout, "  Webhooks: %s (-webhook-url none turns them off)\n", *hookURL)
	} else {
		fmt.Fprintf(stdout, "  Webhooks: off (-webhook-url sets where they go)\n")
	}
	receiverVars := "PAYMENTS_WEBHOOK_SECRET"
	if scheme == paymentstest.SchemeStandard {
		fmt.Fprintf(stdout, "  Signing:  Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)\n")
		receiverVars = "PAYMENTS_WEBHOOK_SECRET and PAYMENTS_WEBHOOK_SCHEME"
	} else {
		fmt.Fprintf(stdout, "  Signing:  the Payments-Signature header (-webhook-scheme standard for Standard Webhooks)\n")
	}
	fmt.Fprintf(stdout, "\nTo point the SDK and its examples at it (%s for examples/webhook-receiver):\n\n", receiverVars)
	fmt.Fprintf(stdout, "export PAYMENTS_BASE_URL=%s\n", shellWord(srv.URL()))
	fmt.Fprintf(stdout, "export PAYMENTS_API_KEY=%s\n", shellWord(srv.APIKey()))
	fmt.Fprintf(stdout, "export PAYMENTS_WEBHOOK_SECRET=%s\n", shellWord(secret))
	if scheme == paymentstest.SchemeStandard {
		fmt.Fprintf(stdout, "export PAYMENTS_WEBHOOK_SCHEME=%s\n", scheme)
	}
	fmt.Fprintln(stdout)
	if *admin {
		printAdminHelp(stdout, srv.URL(), srv.APIKey())
	}
	fmt.Fprintf(stdout, "Press Ctrl+C to stop.\n")

	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(stdout, "payments-sandbox: stopped")
	return nil
}

// printAdminHelp prints curl lines that call the admin API, ready to paste
// into a POSIX shell.
func printAdminHelp(w io.Writer, baseURL, apiKey string) {
	curl := func(method, path, body string) string {
		line := fmt.Sprintf("curl -sS -X %s %s -H %s", method,
			shellQuote(baseURL+path), shellQuote("Authorization: Bearer "+apiKey))
		if body != "" {
			line += " -d " + shellQuote(body)
		}
		return line
	}
	fmt.Fprintf(w, "Admin API (%s; -admin=false turns it off), for example:\n\n", paymentstest.AdminPrefix)
	fmt.Fprintf(w, "# Move the clock 5m1s forward: quotes issued before have expired.\n%s\n",
		curl("POST", "/_sandbox/clock/advance", `{"seconds": 301}`))
	fmt.Fprintf(w, "# A customer pays into a virtual account (the account_number of POST /accounts/virtual-accounts).\n%s\n",
		curl("POST", "/_sandbox/virtual-accounts/ACCOUNT_NUMBER/incoming-payments", `{"amount": 5000.00, "currency": "NGN"}`))
	fmt.Fprintf(w, "# Send webhooks somewhere else from now on (\"\" turns them off; GET reads the setting).\n%s\n",
		curl("PUT", "/_sandbox/webhook-url", `{"url": "`+defaultWebhookURL+`"}`))
	fmt.Fprintf(w, "# The next POST /payments/initiate fails with 503 (DELETE /_sandbox/faults clears faults).\n%s\n",
		curl("POST", "/_sandbox/faults", `{"kind": "status", "status": 503, "times": 1, "path": "/payments/initiate"}`))
	fmt.Fprintf(w, "# Wait for webhook deliveries to finish, then list them.\n%s\n",
		curl("POST", "/_sandbox/deliveries/wait", `{"timeout_seconds": 10}`))
	fmt.Fprintf(w, "# Deliver again every event whose deliveries all failed (POST /_sandbox/events/ID/redeliver: one event).\n%s\n",
		curl("POST", "/_sandbox/events/redeliver-failed", ""))
	fmt.Fprintf(w, "# List the events, oldest first, as Webhooks.ListEvents does (after=ID continues after an event).\n%s\n\n",
		curl("GET", "/webhooks/events?limit=10", ""))
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
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

// shellWord returns s as it is when a POSIX shell would read it as one plain
// word (URLs and the default JWT-shaped key), and quoted otherwise, so that a
// custom -api-key with quotes, spaces or $ still exports intact.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/=+-@%,", r)) {
			return shellQuote(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
