package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The store tests of payments stuck share one throwaway PostgreSQL and one
// Redis (or PAYMENTS_TEST_POSTGRES_URL, PAYMENTS_TEST_REDIS_URL), stopped
// when the tests end.
func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

// fake is the in-process service a test runs the command against, and the
// environment that points the command at it.
type fake struct {
	*paymentstest.Server
	env map[string]string
}

// startFake starts paymentstest with its own deliveries going to a sink
// that answers 200 (Trigger needs a webhook URL), as the service delivers
// to the dashboard's URL while listen forwards to the local receiver.
func startFake(t *testing.T, opts ...paymentstest.Option) *fake {
	t.Helper()
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	srv := paymentstest.NewServer(append([]paymentstest.Option{paymentstest.WithWebhook(paymentstest.Webhook{URL: sink.URL, Secrets: []string{"whsec_sink_secret"}})}, opts...)...)
	t.Cleanup(srv.Close)
	return &fake{Server: srv, env: map[string]string{envAPIKey: srv.APIKey(), envBaseURL: srv.URL()}}
}

// adminAPI turns the fake's admin API on, as payments-sandbox does.
func adminAPI() paymentstest.Option { return paymentstest.WithSandbox(paymentstest.Sandbox{}) }

// admin calls the admin API of f (started with adminAPI): method path
// under /_sandbox/ with body as JSON (nil: none), the answer's data decoded
// into out (nil: ignored). The fake keeps these reads off its Go API.
func (f *fake) admin(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.URL()+"/_sandbox/"+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.APIKey())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s /_sandbox/%s: %s", method, path, raw)
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &env))
	if out != nil {
		require.NoError(t, json.Unmarshal(env.Data, out))
	}
}

// webhookURL is where f delivers webhooks ("" when deliveries are off).
func (f *fake) webhookURL(t *testing.T) string {
	t.Helper()
	var out struct {
		URL string `json:"url"`
	}
	f.admin(t, http.MethodGet, "webhook-url", nil, &out)
	return out.URL
}

// with returns f's environment with more variables.
func (f *fake) with(kv ...string) map[string]string {
	env := map[string]string{}
	for k, v := range f.env {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

// lastStan is the stan of the last request the fake answered.
func (f *fake) lastStan(t *testing.T) string {
	t.Helper()
	reqs := f.Requests()
	require.NotEmpty(t, reqs)
	stan := reqs[len(reqs)-1].Stan
	require.NotEmpty(t, stan)
	return stan
}

// runCLI runs the command line to its end, with env as the environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	code = run(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := runCLI(t, nil, args...)
		assert.Equal(t, exitOK, code, args)
		assert.Equal(t, topUsage, stdout, args)
		assert.Empty(t, stderr, args)
	}
	for _, tc := range []struct {
		args  []string
		first string
		flags []string
	}{
		{[]string{"listen", "--help"}, "Usage: payments listen --forward-to URL [flags]", []string{"-forward-to URL", "-since time", "-interval duration", "-scheme string", "-secret secret", "-events types", "-retries waits"}},
		{[]string{"listen", "--forward-to", "http://x", "-help"}, "Usage: payments listen --forward-to URL [flags]", nil},
		{[]string{"trigger", "--help"}, "Usage: payments trigger EVENT-TYPE", []string{"virtual_account.payment_received"}},
		{[]string{"trigger", "payment.completed", "-h"}, "Usage: payments trigger EVENT-TYPE", nil},
		{[]string{"events", "--help"}, "Usage: payments events list|resend [flags]", nil},
		{[]string{"events", "list", "--help"}, "Usage: payments events list [--since TIME|DURATION] [--after ID] [--type TYPE]... [--limit N] [--json]", []string{"-since time", "-after id", "-type type", "-limit N", "-json"}},
	} {
		// No environment: help needs no API key.
		code, stdout, stderr := runCLI(t, nil, tc.args...)
		assert.Equal(t, exitOK, code, tc.args)
		assert.Equal(t, tc.first, strings.SplitN(stdout, "\n", 2)[0], tc.args)
		for _, f := range tc.flags {
			assert.Contains(t, stdout, "\n  "+f, tc.args)
		}
		assert.Empty(t, stderr, tc.args)
	}
}

// TestRunUsageErrors: every mistake on the command line or in the
// environment exits 2 with one line saying what to do, and sends nothing.
func TestRunUsageErrors(t *testing.T) {
	f := startFake(t)
	noKey := f.with(envAPIKey, "")
	for _, tc := range []struct {
		env    map[string]string
		args   []string
		stderr string
	}{
		{f.env, []string{"refund"}, "payments refund: unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)"},
		{f.env, []string{"stuck", "--store", "redis://localhost"}, "payments stuck: unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)"},
		{f.env, []string{"--version"}, "payments --version: unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)"},
		{f.env, []string{"re fund"}, `payments "re fund": unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)`},
		{f.env, []string{"\x1b[2Jrefund"}, `payments "\x1b[2Jrefund": unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)`},
		{f.env, []string{"trigger"}, "payments: trigger takes one event type, such as payment.completed (got 0 arguments; see payments trigger --help)"},
		{f.env, []string{"trigger", "payment.completed", "payment.failed"}, "payments: trigger takes one event type, such as payment.completed (got 2 arguments; see payments trigger --help)"},
		{f.env, []string{"trigger", "--api-key", "k", "payment.completed"}, "payments: trigger: flag provided but not defined: -api-key (see trigger --help)"},
		{f.env, []string{"events"}, "payments: events needs a subcommand: payments events list|resend (see payments events --help)"},
		{f.env, []string{"events", "show"}, `payments: unknown events subcommand "show": payments events list|resend (see payments events --help)`},
		{f.env, []string{"events", "list", "extra"}, `payments: events list takes no arguments (got "extra"; see payments events list --help)`},
		{f.env, []string{"events", "list", "--limit", "-1"}, "payments: --limit -1: give 0 (all) or more"},
		{f.env, []string{"events", "list", "--since", "yesterday"}, `payments: events list: invalid value "yesterday" for flag -since: give an RFC 3339 time (2025-01-31T09:00:00Z) or a duration before now (90s, 30m, 1h) (see events list --help)`},
		{f.env, []string{"events", "list", "--type", "bad type"}, "payments: invalid parameters: type[0]: must be an event kind such as payment.completed: 1 to 128 printable ASCII characters without spaces"},
		{f.env, []string{"listen"}, "payments: listen needs --forward-to URL, such as http://localhost:8080/webhooks"},
		{f.env, []string{"listen", "--forward-to", "localhost:8080/webhooks"}, `payments: --forward-to "localhost:8080/webhooks": give an http or https URL, such as http://localhost:8080/webhooks`},
		{f.env, []string{"listen", "--forward-to", "http://localhost/", "--interval", "0s"}, "payments: --interval 0s: give a positive duration such as 2s"},
		{f.env, []string{"listen", "--forward-to", "http://localhost/", "--retries", "1s,soon"}, `payments: --retries "1s,soon": give waits such as 1s,2s,4s,8s, or none`},
		{f.env, []string{"listen", "--forward-to", "http://localhost/", "--scheme", "hmac"}, `payments: --scheme "hmac": give payments (the Payments-Signature header) or standard (Standard Webhooks)`},
		{f.with(envWebhookScheme, "v2"), []string{"listen", "--forward-to", "http://localhost/"}, `payments: --scheme "v2": give payments (the Payments-Signature header) or standard (Standard Webhooks)`},
		{f.env, []string{"listen", "--forward-to", "http://localhost/", "stray"}, `payments: listen takes no arguments (got "stray"; see payments listen --help)`},
		{noKey, []string{"trigger", "payment.completed"}, "payments: PAYMENTS_API_KEY is not set: export the API key (it is never taken as a flag, to keep it out of shell history)"},
		{noKey, []string{"events", "list"}, "payments: PAYMENTS_API_KEY is not set: export the API key (it is never taken as a flag, to keep it out of shell history)"},
		{f.with(envBaseURL, ""), []string{"listen", "--forward-to", "http://localhost/"}, "payments: PAYMENTS_BASE_URL is not set: export the service's base URL (cmd/payments-sandbox prints both lines)"},
		{f.with(envBaseURL, "http://payments.example"), []string{"events", "list"}, "payments: invalid configuration: the base URL http://payments.example is plain http and not loopback: the API key would travel in clear text (WithInsecurePlainHTTP allows it, for sandboxes only)"},
	} {
		before := len(f.Requests())
		code, stdout, stderr := runCLI(t, tc.env, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Empty(t, stdout, tc.args)
		assert.Equal(t, tc.stderr+"\n", stderr, tc.args)
		assert.Len(t, f.Requests(), before, "%v: nothing is sent", tc.args)
	}

	code, stdout, stderr := runCLI(t, nil)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, topUsage, stderr)
}

// TestRunAPIErrorsShowTheStan: an error of the service exits 1 with the
// SDK's error, which carries the stan, and never the API key.
func TestRunAPIErrorsShowTheStan(t *testing.T) {
	f := startFake(t)
	const wrongKey = "wrong-key-d41d8cd98f00"
	for _, args := range [][]string{
		{"trigger", "payment.completed"},
		{"events", "list"},
		{"listen", "--forward-to", "http://127.0.0.1:1/webhooks"},
	} {
		code, stdout, stderr := runCLI(t, f.with(envAPIKey, wrongKey), args...)
		assert.Equal(t, exitFailure, code, args)
		assert.Empty(t, stdout, args)
		stan := f.lastStan(t)
		assert.Regexp(t, `^payments: HTTP 401 Unauthorized: invalid API key \(code=unauthorized, stan=`+stan+`\) after 1 attempt\(s\)\n$`, stderr, args)
		assert.NotContains(t, stderr, wrongKey, args)
	}

	// An event type the fake does not know: the note, then its 422.
	code, stdout, stderr := runCLI(t, f.env, "trigger", "payment.refunded")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 2, stderr)
	assert.Equal(t, `payments: "payment.refunded" is not an event type of the specification; sending it as given`, lines[0])
	assert.Regexp(t, `^payments: HTTP 422 Unprocessable Entity: Validation failed: event_id; event_id: must be one of payment.initiated, .* \(code=validation_failed, stan=`+f.lastStan(t)+`\) after 1 attempt\(s\)$`, lines[1])
}

func TestShow(t *testing.T) {
	assert.Equal(t, "payment.completed", show("payment.completed"))
	assert.Equal(t, "0b6c6e4f-1d2b-4b8e-9a43-5e0f6c3d2a10", show("0b6c6e4f-1d2b-4b8e-9a43-5e0f6c3d2a10"))
	assert.Equal(t, `"evt\x1b[2Jx"`, show("evt\x1b[2Jx"), "no terminal escape gets through")
	assert.Equal(t, `"a\nb"`, show("a\nb"))
	assert.Equal(t, `"a b"`, show("a b"))
	assert.Equal(t, `""`, show(""))
}

func TestParseInterleavesFlagsAndArguments(t *testing.T) {
	c := &cli{stdout: new(testlog.Buffer), stderr: new(testlog.Buffer)}
	fs := c.newFlagSet("t", "usage")
	n := fs.Int("n", 0, "")
	pos, err := fs.parse([]string{"a", "-n", "3", "b", "--", "-n", "c"})
	require.NoError(t, err)
	assert.Equal(t, 3, *n)
	assert.Equal(t, []string{"a", "b", "-n", "c"}, pos)
}
