package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
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
	"github.com/paymentsapi/payments-go/webhook"
)

var (
	baseURLLine = regexp.MustCompile(`(?m)^export PAYMENTS_BASE_URL=(\S+)$`)
	apiKeyLine  = regexp.MustCompile(`(?m)^export PAYMENTS_API_KEY=(\S+)$`)
	secretLine  = regexp.MustCompile(`(?m)^export PAYMENTS_WEBHOOK_SECRET=(\S+)$`)
)

func TestRunServesUntilCancelled(t *testing.T) {
	var mu sync.Mutex
	var hooks [][]byte
	var headers []http.Header
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hooks, headers = append(hooks, body), append(headers, r.Header.Clone())
		mu.Unlock()
	}))
	defer receiver.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testlog.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-webhook-url", receiver.URL, "-webhook-retry-wait", "1ms"}, noEnv, &stdout, &stderr, serverTimeouts())
	}()
	require.Eventually(t, func() bool { return apiKeyLine.MatchString(stdout.String()) }, 5*time.Second, 5*time.Millisecond)
	out := stdout.String()
	baseURL := baseURLLine.FindStringSubmatch(out)[1]
	apiKey := apiKeyLine.FindStringSubmatch(out)[1]
	secret := secretLine.FindStringSubmatch(out)[1]
	assert.True(t, strings.HasPrefix(secret, "pssec_"), "a Payments-Signature secret, not a Standard Webhooks whsec_ one")
	assert.Contains(t, out, "Webhooks: "+receiver.URL)
	assert.NotContains(t, stderr.String(), secret, "the secret is never logged")

	t.Setenv("PAYMENTS_BASE_URL", baseURL)
	t.Setenv("PAYMENTS_API_KEY", apiKey)
	client, err := payments.NewClientFromEnv(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	sandboxRecipient(t, client)
	assert.Contains(t, stderr.String(), "path=/payments/recipients", "requests are logged")
	assert.NotContains(t, stderr.String(), apiKey, "the key is never logged")

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(hooks) == 2
	}, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	_, err = webhook.ConstructEvent(hooks[0], headers[0], secret)
	mu.Unlock()
	require.NoError(t, err, "deliveries are signed with the printed secret")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop")
	}
	assert.Contains(t, stdout.String(), "stopped")
	_, err = client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "1", AccountName: "A", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}, payments.WithIdempotencyKey("after-stop"))
	require.Error(t, err, "the server is gone")
}

func TestRunFixedKeyQuiet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testlog.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "sandbox", "-webhook-url", "none", "-quiet"}, noEnv, &stdout, &stderr, serverTimeouts())
	}()
	require.Eventually(t, func() bool { return apiKeyLine.MatchString(stdout.String()) }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, "sandbox", apiKeyLine.FindStringSubmatch(stdout.String())[1])
	assert.Contains(t, stdout.String(), "Webhooks: off")
	baseURL := baseURLLine.FindStringSubmatch(stdout.String())[1]
	client, err := payments.NewClient("sandbox", payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	_, err = client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example",
	})
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-done)
	assert.Empty(t, stderr.String())
}

var advanceLine = regexp.MustCompile(`(?m)^curl -sS -X POST '([^']+/_sandbox/clock/advance)' -H '([^':]+): ([^']+)' -d '([^']+)'$`)

// startRun runs the command until the test ends and returns its base URL,
// API key and output. Webhooks are off unless args set -webhook-url, so
// that no test sends events to whatever listens on localhost:8080.
func startRun(t *testing.T, args ...string) (baseURL, apiKey string, stdout, stderr *testlog.Buffer) {
	t.Helper()
	return startRunTimeouts(t, serverTimeouts(), append([]string{"-webhook-url", "none"}, args...)...)
}

// startRunTimeouts is startRun with the server's timeouts, and without
// turning webhooks off.
func startRunTimeouts(t *testing.T, timeouts httpTimeouts, args ...string) (baseURL, apiKey string, stdout, stderr *testlog.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = new(testlog.Buffer), new(testlog.Buffer)
	done := make(chan error, 1)
	args = append([]string{"-addr", "127.0.0.1:0"}, args...)
	go func() { done <- run(ctx, args, noEnv, stdout, stderr, timeouts) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "Press Ctrl+C") }, 5*time.Second, 5*time.Millisecond)
	out := stdout.String()
	return baseURLLine.FindStringSubmatch(out)[1], apiKeyLine.FindStringSubmatch(out)[1], stdout, stderr
}

func TestRunAdminAPI(t *testing.T) {
	ctx := context.Background()
	baseURL, apiKey, stdout, stderr := startRun(t)
	out := stdout.String()
	for _, route := range []string{"/_sandbox/virtual-accounts/ACCOUNT_NUMBER/incoming-payments", "/_sandbox/faults", "/_sandbox/deliveries/wait", "/_sandbox/webhook-url"} {
		assert.Contains(t, out, route, "a curl line for %s", route)
	}

	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	r := sandboxRecipient(t, client)
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("120.50")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-1",
	})
	require.NoError(t, err)

	// Do what the printed curl line does.
	m := advanceLine.FindStringSubmatch(out)
	require.NotNil(t, m, "the clock/advance curl line in:\n%s", out)
	assert.Equal(t, baseURL+"/_sandbox/clock/advance", m[1])
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m[1], strings.NewReader(m[4]))
	require.NoError(t, err)
	req.Header.Set(m[2], m[3])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Success bool   `json:"success"`
		Stan    string `json:"stan"`
		Data    struct {
			Now time.Time `json:"now"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, env.Success)
	assert.NotEmpty(t, env.Stan)
	assert.WithinDuration(t, time.Now().Add(301*time.Second), env.Data.Now, time.Minute)

	_, err = client.Payments.Confirm(ctx, p.ConfirmParams())
	require.ErrorIs(t, err, payments.CodeQuoteExpired, "the quote expired on the sandbox's clock")
	assert.Contains(t, stderr.String(), "paymentstest: admin request")
	assert.NotContains(t, stderr.String(), apiKey)
}

func TestRunAdminOff(t *testing.T) {
	baseURL, apiKey, stdout, _ := startRun(t, "-admin=false", "-quiet")
	assert.NotContains(t, stdout.String(), "curl")
	req, err := http.NewRequest(http.MethodGet, baseURL+"/_sandbox/clock", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestRunBadArguments(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown flag":     {"-nope"},
		"extra argument":   {"serve"},
		"bad webhook url":  {"-addr", "127.0.0.1:0", "-webhook-url", "ftp://x"},
		"bad address":      {"-addr", "not an address"},
		"negative backoff": {"-addr", "127.0.0.1:0", "-webhook-retry-wait", "-1s"},
		"both retry flags": {"-addr", "127.0.0.1:0", "-webhook-retry-wait", "1s", "-webhook-retries", "1s"},
		"bad retries":      {"-addr", "127.0.0.1:0", "-webhook-retries", "1s,soon"},
		"negative retry":   {"-addr", "127.0.0.1:0", "-webhook-retries", "1s,-1s"},
		"unknown differ":   {"-addr", "127.0.0.1:0", "-differ", "quote-flat,quote-sideways"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut testlog.Buffer
			err := run(context.Background(), args, noEnv, &out, &errOut, serverTimeouts())
			require.Error(t, err)
		})
	}
	var out, errOut testlog.Buffer
	err := run(context.Background(), []string{"-help"}, noEnv, &out, &errOut, serverTimeouts())
	require.True(t, errors.Is(err, flag.ErrHelp))
	assert.Contains(t, errOut.String(), "-webhook-url")
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8765":   "http://127.0.0.1:8765",
		"eyJhbGciOi.eyJzdWIi.sig": "eyJhbGciOi.eyJzdWIi.sig",
		"it's $HOME":              `'it'\''s $HOME'`,
		"":                        "''",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRunWebhookRetriesFlag(t *testing.T) {
	schedule := func(baseURL, apiKey string) []string {
		t.Helper()
		status, data := adminCall(t, baseURL, apiKey, http.MethodGet, "/_sandbox/webhook-retries", "")
		require.Equal(t, http.StatusOK, status, "%s", data)
		var v struct {
			Waits []string `json:"waits"`
		}
		require.NoError(t, json.Unmarshal(data, &v))
		return v.Waits
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"1s", "2s", "4s", "8s"}},
		{[]string{"-webhook-retry-wait", "1ms"}, []string{"1ms", "2ms", "4ms", "8ms"}},
		{[]string{"-webhook-retries", "250ms, 1s,1m"}, []string{"250ms", "1s", "1m0s"}},
		{[]string{"-webhook-retries", "none"}, []string{}},
		{[]string{"-webhook-retries="}, []string{}},
	} {
		baseURL, apiKey, _, _ := startRun(t, append(tc.args, "-quiet")...)
		assert.Equal(t, tc.want, schedule(baseURL, apiKey), "%q", tc.args)
	}
}

// TestRunListAndRedeliverEvents: the sandbox lists its events for
// Webhooks.ListEvents, and its admin API delivers failed ones again, as the
// printed curl lines say.
func TestRunListAndRedeliverEvents(t *testing.T) {
	var up atomic.Bool
	var got atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got.Add(1)
	}))
	defer rc.Close()
	baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), "-webhook-url", rc.URL, "-webhook-retries", "none", "-quiet")
	for _, route := range []string{"/_sandbox/events/redeliver-failed", "/webhooks/events?limit=10"} {
		assert.Contains(t, stdout.String(), route, "a curl line for %s", route)
	}
	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	sandboxRecipient(t, client)
	status, data := adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)

	var ids []string
	for ev, err := range client.Webhooks.ListEvents(context.Background(), &payments.EventListParams{Limit: 1}) {
		require.NoError(t, err)
		ids = append(ids, ev.ID)
	}
	require.Len(t, ids, 2, "recipient.created and recipient.verified")

	up.Store(true)
	status, data = adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/events/redeliver-failed", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.JSONEq(t, `{"event_ids": ["`+ids[0]+`", "`+ids[1]+`"]}`, string(data))
	status, data = adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.Equal(t, int32(2), got.Load())
}

// sandboxRecipient creates a recipient, which emits two events:
// recipient.created and recipient.verified.
func sandboxRecipient(t *testing.T, client *payments.Client) *payments.Recipient {
	t.Helper()
	r, err := client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	return r
}

// noEnv is an empty environment, so that a test never picks up the
// PAYMENTS_ variables of the shell that runs it.
func noEnv(string) string { return "" }

// TestRunDiffer: -differ makes the sandbox answer as a service that differs
// from the SDK's assumptions (here the quote flat in data and HTML errors),
// and the banner says so.
func TestRunDiffer(t *testing.T) {
	baseURL, apiKey, stdout, _ := startRun(t, "-quiet", "-differ", "quote-flat, html-errors")
	assert.Contains(t, stdout.String(), "Differing from the SDK's assumptions on purpose (-differ): quote-flat, html-errors; payments doctor names each")
	req, err := http.NewRequest(http.MethodPost, baseURL+"/payments/initiate", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), "%s", body)

	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	ctx := context.Background()
	r, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	require.NoError(t, err)
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("100")}, Currency: "NGN", RecipientID: r.ID, Reference: "differ-1"})
	require.NoError(t, err)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(p.RawJSON(), &raw))
	assert.NotContains(t, raw, "quote", "the quote is flat in data")
	assert.Contains(t, raw, "quote_id")
}
