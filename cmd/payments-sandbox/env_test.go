package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// sandboxRun is one run of the command, stopped by stop.
type sandboxRun struct {
	stdout, stderr *testlog.Buffer
	cancel         context.CancelFunc
	done           chan error
}

// startEnvRun runs the command with env as its environment until stop (or
// the end of the test).
func startEnvRun(t *testing.T, env map[string]string, args ...string) *sandboxRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &sandboxRun{stdout: new(testlog.Buffer), stderr: new(testlog.Buffer), cancel: cancel, done: make(chan error, 1)}
	getenv := func(name string) string { return env[name] }
	go func() { r.done <- run(ctx, args, getenv, r.stdout, r.stderr, serverTimeouts()) }()
	t.Cleanup(r.stop)
	require.Eventually(t, func() bool { return strings.Contains(r.stdout.String(), "Press Ctrl+C") }, 5*time.Second,
		5*time.Millisecond, "the sandbox did not start:\n%s\n%s", r.stdout, r.stderr)
	return r
}

func (r *sandboxRun) stop() {
	r.cancel()
	<-r.done
	r.done <- nil // stop again returns at once
}

// exported returns the variables of the export lines the run printed.
func (r *sandboxRun) exported() map[string]string {
	vars := map[string]string{}
	for _, line := range exportLines(r.stdout.String()) {
		name, value, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		vars[name] = value
	}
	return vars
}

// envReceiver is a webhook endpoint configured, as examples/webhook-receiver
// is, from the variables the sandbox exported.
type envReceiver struct {
	*httptest.Server
	handler  atomic.Pointer[webhook.Handler]
	mu       sync.Mutex
	statuses []int
}

func newEnvReceiver(t *testing.T) *envReceiver {
	rc := &envReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := rc.handler.Load()
		if h == nil {
			http.Error(w, "not configured yet", http.StatusServiceUnavailable)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		rc.mu.Lock()
		rc.statuses = append(rc.statuses, sw.status)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

// configure reads PAYMENTS_WEBHOOK_SECRET and PAYMENTS_WEBHOOK_SCHEME.
func (rc *envReceiver) configure(t *testing.T, vars map[string]string) {
	t.Helper()
	secrets := []string{vars[envSecret]}
	var v webhook.Verifier
	var err error
	if vars[envScheme] == "standard" {
		v, err = webhook.NewStandardVerifier(secrets)
	} else {
		v, err = webhook.NewSignatureVerifier(secrets)
	}
	require.NoError(t, err)
	rc.handler.Store(webhook.NewHandler(v, func(context.Context, *payments.Event) error { return nil }))
}

func (rc *envReceiver) answers() []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]int(nil), rc.statuses...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// deliverySummary waits for the sandbox's deliveries and returns each
// one's status and the status code of its attempts.
func deliverySummary(t *testing.T, baseURL, apiKey string) []string {
	t.Helper()
	status, data := adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", `{"timeout_seconds": 10}`)
	require.Equal(t, http.StatusOK, status)
	var log deliveryLog
	require.NoError(t, json.Unmarshal(data, &log))
	var out []string
	for _, d := range log.Deliveries {
		s := d.Event + " " + d.Status
		for _, a := range d.Attempts {
			s += " " + http.StatusText(a.StatusCode)
		}
		out = append(out, s)
	}
	return out
}

// TestRunKeepsTheExportedValuesAcrossARestart: a receiver started with the
// values a first run exported keeps answering 200 to a second run started
// with the same environment, and the SDK's key keeps working.
func TestRunKeepsTheExportedValuesAcrossARestart(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		reused string
	}{
		{"payments", "reusing PAYMENTS_API_KEY and PAYMENTS_WEBHOOK_SECRET from the environment"},
		{"standard", "reusing PAYMENTS_API_KEY, PAYMENTS_WEBHOOK_SECRET and PAYMENTS_WEBHOOK_SCHEME from the environment"},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			rc := newEnvReceiver(t)
			first := startEnvRun(t, nil, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", rc.URL, "-webhook-scheme", tc.scheme)
			assert.NotContains(t, first.stdout.String(), "reusing")
			env := first.exported()
			secret := env[envSecret]
			if tc.scheme == "standard" {
				assert.Equal(t, "standard", env[envScheme])
			} else {
				assert.Regexp(t, `^pssec_[0-9a-f]{32}$`, secret, "the payments scheme's secret is hex")
				assert.NotContains(t, env, envScheme)
			}
			rc.configure(t, env)
			baseURL, key := env["PAYMENTS_BASE_URL"], env[envAPIKey]
			client, err := payments.NewClient(key, payments.WithBaseURL(baseURL), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
			require.NoError(t, err)
			sandboxRecipient(t, client)
			assert.Equal(t, []string{"recipient.created delivered OK", "recipient.verified delivered OK"},
				deliverySummary(t, baseURL, key))
			first.stop()

			// The same environment, the same address, no flag for the key,
			// the secret or the scheme.
			second := startEnvRun(t, env, "-addr", strings.TrimPrefix(baseURL, "http://"), "-webhook-url", rc.URL)
			out := second.stdout.String()
			assert.Contains(t, out, "\n"+tc.reused+"\n")
			again := exportLines(out)
			assert.Equal(t, "export PAYMENTS_BASE_URL="+baseURL, again[0], "the same URL")
			assert.Contains(t, out, "\n# PAYMENTS_API_KEY: already exported, reused\n# PAYMENTS_WEBHOOK_SECRET: already exported, reused\n")
			assert.NotContains(t, out, key, "a key from the environment is never printed:\n%s", out)
			assert.NotContains(t, out, secret, "a secret from the environment is never printed")
			assert.Contains(t, out, `-H "Authorization: Bearer $PAYMENTS_API_KEY"`, "the curl lines read the key")
			assert.NotContains(t, second.stderr.String(), key)
			assert.NotContains(t, second.stderr.String(), secret)

			sandboxRecipient(t, client) // the client made before the restart
			assert.Equal(t, []string{"recipient.created delivered OK", "recipient.verified delivered OK"},
				deliverySummary(t, baseURL, key), "the running receiver accepts the new deliveries")
			assert.Equal(t, []int{200, 200, 200, 200}, rc.answers())
		})
	}
}

// A shell set up for the real service (PAYMENTS_BASE_URL not on this
// machine) holds a real key and secret: the sandbox neither adopts nor
// prints them, and makes its own.
func TestRunNeverAdoptsTheRealServicesCredentials(t *testing.T) {
	const realKey, realSecret = "sk_live_do_not_print_0123456789", "whsec_live00112233445566778899aabbccdd"
	run := startEnvRun(t, map[string]string{"PAYMENTS_BASE_URL": "https://api.payments.example", envAPIKey: realKey, envSecret: realSecret},
		"-addr", "127.0.0.1:0", "-quiet", "-webhook-url", "none")
	out := run.stdout.String() + run.stderr.String()
	assert.NotContains(t, out, realKey)
	assert.NotContains(t, out, realSecret)
	assert.NotContains(t, out, "reusing")
	env := run.exported()
	assert.NotEqual(t, realKey, env[envAPIKey])
	assert.NotEmpty(t, env[envAPIKey])
}

// loopbackURL decides whether PAYMENTS_BASE_URL is a sandbox's, whose key
// and secret the sandbox may adopt: empty, or a URL on this machine in
// internal/loopback's sense (LOCALHOST counts, as in the SDK's own check).
func TestLoopbackURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"", true},
		{"  ", true},
		{"http://127.0.0.1:8080", true},
		{"http://127.0.0.2:8080", true},
		{"http://localhost:8080", true},
		{"http://LOCALHOST:8080", true},
		{"http://[::1]:8080", true},
		{" http://127.0.0.1:8080 ", true},
		{"https://api.payments.example", false},
		{"http://10.0.0.5:8080", false},
		{"http://0.0.0.0:8080", false},
		{"http://localhost.:8080", false},
		{"http://localhost.payments.example", false},
		{"http://localhoſt:8080", false},
		{"localhost:8080", false}, // no scheme: localhost is the scheme
		{"http://[::1", false},    // not a URL
	} {
		assert.Equal(t, tc.want, loopbackURL(tc.url), "%q", tc.url)
	}
}

func TestRunRefusesASecretThatDoesNotFitTheScheme(t *testing.T) {
	const hexSecret = "whsec_00112233445566778899aabbccddeeff"
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"hex secret, standard from the environment": {
			env: map[string]string{envScheme: "standard", envSecret: hexSecret},
			want: "PAYMENTS_WEBHOOK_SECRET does not fit the standard scheme (PAYMENTS_WEBHOOK_SCHEME): secret 0 is hex, " +
				"the form of a Payments-Signature secret: a Standard Webhooks secret is whsec_ followed by base64 " +
				"(use a SignatureVerifier for this one); unset PAYMENTS_WEBHOOK_SECRET for a new secret, or set the scheme it was made for",
		},
		"hex secret, standard from the flag": {
			env:  map[string]string{envSecret: hexSecret},
			args: []string{"-webhook-scheme", "standard"},
			want: "PAYMENTS_WEBHOOK_SECRET does not fit the standard scheme (-webhook-scheme): secret 0 is hex, " +
				"the form of a Payments-Signature secret: a Standard Webhooks secret is whsec_ followed by base64 " +
				"(use a SignatureVerifier for this one); unset PAYMENTS_WEBHOOK_SECRET for a new secret, or set the scheme it was made for",
		},
		"a space in a payments secret": {
			env: map[string]string{envSecret: "whsec_00 11"},
			want: "PAYMENTS_WEBHOOK_SECRET does not fit the payments scheme (the default): secret 0 holds spaces or control " +
				"characters; unset PAYMENTS_WEBHOOK_SECRET for a new secret, or set the scheme it was made for",
		},
		"unknown scheme": {
			env:  map[string]string{envScheme: "hmac"},
			want: `PAYMENTS_WEBHOOK_SCHEME="hmac": use payments (the Payments-Signature header) or standard (Standard Webhooks)`,
		},
		"a space in the key": {
			env:  map[string]string{envAPIKey: "two words"},
			want: "PAYMENTS_API_KEY holds spaces or control characters: unset it for a new key, or export the one the sandbox printed",
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut testlog.Buffer
			args := append([]string{"-addr", "127.0.0.1:0"}, tc.args...)
			err := run(context.Background(), args, func(n string) string { return tc.env[n] }, &out, &errOut, serverTimeouts())
			require.EqualError(t, err, tc.want)
			assert.Empty(t, out.String(), "the sandbox did not start")
		})
	}
}

func TestRunFlagsWinOverTheEnvironment(t *testing.T) {
	standard, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	env := map[string]string{envAPIKey: "env-key", envSecret: standard, envScheme: "standard"}
	r := startEnvRun(t, env, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", "none",
		"-api-key", "flag-key", "-webhook-scheme", "payments")
	out := r.stdout.String()
	vars := r.exported()
	assert.Equal(t, "flag-key", vars[envAPIKey])
	assert.NotContains(t, vars, envSecret, "the secret has no flag here: reused, and not printed")
	assert.Contains(t, out, "\n# PAYMENTS_WEBHOOK_SECRET: already exported, reused\n")
	assert.NotContains(t, out, standard)
	assert.Equal(t, "payments", vars[envScheme], "said, so that pasting the lines replaces the stale standard")
	assert.Contains(t, out, "\nreusing PAYMENTS_WEBHOOK_SECRET from the environment\n")
	assert.Contains(t, out, "API key:  flag-key")

	r = startEnvRun(t, env, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", "none", "-webhook-secret", "flag-secret",
		"-webhook-scheme", "payments")
	assert.Equal(t, "flag-secret", r.exported()[envSecret])
	assert.Contains(t, r.stdout.String(), "\nreusing PAYMENTS_API_KEY from the environment\n")
	assert.Contains(t, r.stdout.String(), "API key:  $PAYMENTS_API_KEY\n")
}

func TestRunTestValues(t *testing.T) {
	r := startEnvRun(t, nil, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", "none",
		"-balance", "5000", "-balance-low-threshold", "100", "-processing-delay", "1h")
	out := r.stdout.String()
	assert.Contains(t, out, "  Balance:  5000.00 in each currency (-balance); account.balance_low below 100.00 (-balance-low-threshold)\n")
	assert.Contains(t, out, "  Failing:  account numbers 4000000002 (fails verification) and 4000000005 (verifies late); amounts 4000.02 (fails),\n"+
		"            4000.03 (rejected) and 4000.05 (completes late): see the README's test values\n")
	vars := r.exported()
	client, err := payments.NewClient(vars[envAPIKey], payments.WithBaseURL(vars["PAYMENTS_BASE_URL"]), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	ctx := context.Background()
	rcpt := sandboxRecipient(t, client)
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("4990")}, Currency: "NGN", RecipientID: rcpt.ID, Reference: "order-1",
	})
	require.NoError(t, err)
	_, err = client.Payments.Confirm(ctx, p.ConfirmParams())
	assert.ErrorIs(t, err, payments.CodeInsufficientBalance, "4990 + fee > 5000")

	late, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: paymentstest.AccountNumberVerifiesLate, AccountName: "Ada Lovelace",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	_, err = client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("10")}, Currency: "NGN", RecipientID: late.ID, Reference: "order-2",
	})
	assert.ErrorIs(t, err, payments.CodeRecipientNotVerified, "an hour is not over")

	for _, bad := range [][]string{{"-balance", "lots"}, {"-balance-low-threshold", "-1"}, {"-processing-delay", "-1s"}} {
		var o, e testlog.Buffer
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, bad...), noEnv, &o, &e, serverTimeouts())
		require.Error(t, err, bad)
	}
	var o, e testlog.Buffer
	err = run(ctx, []string{"-addr", "127.0.0.1:0", "-balance", "lots"}, noEnv, &o, &e, serverTimeouts())
	require.EqualError(t, err, `-balance "lots": give an amount of 0 or more, such as 5000.00`)
}

// deliveryLog is the data of GET /_sandbox/deliveries.
type deliveryLog struct {
	Pending    int `json:"pending"`
	Deliveries []struct {
		EventID   string    `json:"event_id"`
		Event     string    `json:"event"`
		URL       string    `json:"url"`
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"created_at"`
		Attempts  []struct {
			StatusCode int `json:"status_code"`
		} `json:"attempts"`
	} `json:"deliveries"`
}

// exportLines returns the lines of out that start with "export ".
func exportLines(out string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "export ") {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}
