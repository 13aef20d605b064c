package main

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/paymentsapi/payments-go/internal/loopback"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/shopspring/decimal"
)

// printBanner prints where the sandbox is, what it reused from the
// environment, its test values and the lines to export. It never prints a
// key or a secret that came from the environment.
func printBanner(w io.Writer, srv *paymentstest.Server, creds credentials, hookURL string, balance, balanceLow decimal.Decimal) {
	fmt.Fprintf(w, "payments-sandbox: a fake Payments API; its state lives in memory and is lost on exit.\n\n")
	fmt.Fprintf(w, "  URL:      %s\n", srv.URL())
	if slices.Contains(creds.reused, envAPIKey) {
		fmt.Fprintf(w, "  API key:  $%s\n", envAPIKey)
	} else {
		fmt.Fprintf(w, "  API key:  %s\n", srv.APIKey())
	}
	if urls := splitList(hookURL); len(urls) > 1 {
		fmt.Fprintf(w, "  Webhooks: round robin to %s (-webhook-url none turns them off)\n", strings.Join(urls, ", "))
	} else if hookURL != "" {
		fmt.Fprintf(w, "  Webhooks: %s (-webhook-url none turns them off)\n", hookURL)
	} else {
		fmt.Fprintf(w, "  Webhooks: off (-webhook-url sets where they go)\n")
	}
	receiverVars := envSecret
	if creds.scheme == paymentstest.SchemeStandard {
		fmt.Fprintf(w, "  Signing:  Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)\n")
		receiverVars = envSecret + " and " + envScheme
	} else {
		fmt.Fprintf(w, "  Signing:  the Payments-Signature header (-webhook-scheme standard for Standard Webhooks)\n")
	}
	fmt.Fprintf(w, "  Balance:  %s in each currency (-balance); account.balance_low below %s (-balance-low-threshold)\n",
		balance.StringFixed(2), balanceLow.StringFixed(2))
	fmt.Fprintf(w, "  Failing:  account numbers %s (fails verification) and %s (verifies late); amounts %s (fails),\n"+
		"            %s (rejected) and %s (completes late): see the README's test values\n",
		paymentstest.AccountNumberFailsVerification, paymentstest.AccountNumberVerifiesLate,
		paymentstest.AmountFails, paymentstest.AmountRejected, paymentstest.AmountCompletesLate)
	if len(creds.reused) > 0 {
		fmt.Fprintf(w, "\nreusing %s from the environment\n", joinNames(creds.reused))
	}
	fmt.Fprintf(w, "\nTo point the SDK and its examples at it (%s for examples/webhook-receiver;\n", receiverVars)
	fmt.Fprintf(w, "paste them where you start the sandbox too, and a restart keeps them):\n\n")
	fmt.Fprintf(w, "export PAYMENTS_BASE_URL=%s\n", shellWord(srv.URL()))
	// A value taken from the environment is already exported there, and is
	// never printed: the shell may be one a real key was exported in.
	if slices.Contains(creds.reused, envAPIKey) {
		fmt.Fprintf(w, "# %s: already exported, reused\n", envAPIKey)
	} else {
		fmt.Fprintf(w, "export %s=%s\n", envAPIKey, shellWord(srv.APIKey()))
	}
	if slices.Contains(creds.reused, envSecret) {
		fmt.Fprintf(w, "# %s: already exported, reused\n", envSecret)
	} else {
		fmt.Fprintf(w, "export %s=%s\n", envSecret, shellWord(strings.Join(creds.secrets, ",")))
	}
	if creds.scheme == paymentstest.SchemeStandard || creds.schemeFromEnv {
		fmt.Fprintf(w, "export %s=%s\n", envScheme, creds.scheme)
	}
	fmt.Fprintln(w)
}

// printAdminHelp prints curl lines that call the admin API, ready to paste
// into a POSIX shell. A key from the environment is not printed again: the
// lines read it from $PAYMENTS_API_KEY.
func printAdminHelp(w io.Writer, baseURL, apiKey string, keyFromEnv bool) {
	auth := shellQuote("Authorization: Bearer " + apiKey)
	if keyFromEnv {
		auth = `"Authorization: Bearer $` + envAPIKey + `"`
	}
	curl := func(method, path, body string) string {
		line := fmt.Sprintf("curl -sS -X %s %s -H %s", method, shellQuote(baseURL+path), auth)
		if body != "" {
			line += " -d " + shellQuote(body)
		}
		return line
	}
	fmt.Fprintf(w, "Admin API (%s; -admin=false turns it off), for example:\n\n", adminPrefix)
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

// printDashboard prints where the dashboard is, and says loudly when it is
// open to other machines.
func printDashboard(w io.Writer, u, addr string, remote bool, chaos deliveryFlags) {
	if u != "" {
		fmt.Fprintf(w, "Dashboard: %s (payments open prints it again)\n", u)
		host, _, err := net.SplitHostPort(addr)
		switch {
		case remote:
			fmt.Fprintf(w, "WARNING: -dashboard-remote: anyone who can reach %s can see the sandbox and use its buttons (no login).\n", addr)
		case err == nil && !loopback.Host(host):
			fmt.Fprintf(w, "Note: the API listens on %s, but the dashboard answers this machine only (-dashboard-remote opens it).\n", addr)
		}
	}
	if chaos != (deliveryFlags{}) {
		fmt.Fprintf(w, "Deliveries misbehave on purpose: late by %s, twice: %v, newest first: %v.\n", chaos.Delay, chaos.Duplicate, chaos.NewestFirst)
	}
	fmt.Fprintln(w)
}

// deliveryFlags is how the flags make deliveries misbehave (the Delivery…
// fields of paymentstest.Sandbox).
type deliveryFlags struct {
	Delay                  time.Duration
	Duplicate, NewestFirst bool
}
