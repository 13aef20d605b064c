package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

var schemeLine = regexp.MustCompile(`(?m)^export PAYMENTS_WEBHOOK_SCHEME=(\S+)$`)

// webhookSetting reads GET /_sandbox/webhook-url.
func webhookSetting(t *testing.T, baseURL, apiKey string) (url, scheme string) {
	t.Helper()
	status, data := adminCall(t, baseURL, apiKey, http.MethodGet, "/_sandbox/webhook-url", "")
	require.Equal(t, http.StatusOK, status)
	var v struct{ URL, Scheme string }
	require.NoError(t, json.Unmarshal(data, &v))
	return v.URL, v.Scheme
}

// TestRunStandardScheme: with -webhook-scheme standard the sandbox prints a
// whsec_ secret and PAYMENTS_WEBHOOK_SCHEME=standard, the admin API reports
// the scheme, and every delivery passes webhook.NewStandardVerifier with
// the printed secret through the SDK's handler.
func TestRunStandardScheme(t *testing.T) {
	baseURL, apiKey, stdout, stderr := startRun(t, "-webhook-scheme", "standard", "-webhook-retry-wait", "1ms")
	out := stdout.String()
	secret := secretLine.FindStringSubmatch(out)[1]
	assert.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	require.NotNil(t, schemeLine.FindStringSubmatch(out), "the scheme's export line:\n%s", out)
	assert.Equal(t, "standard", schemeLine.FindStringSubmatch(out)[1])
	assert.Contains(t, out, "Signing:  Standard Webhooks")
	_, scheme := webhookSetting(t, baseURL, apiKey)
	assert.Equal(t, "standard", scheme)

	v, err := webhook.NewStandardVerifier([]string{secret})
	require.NoError(t, err, "the printed secret is a Standard Webhooks secret")
	var mu sync.Mutex
	var got []string
	var headers []http.Header
	h := webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.ID)
		return nil
	})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer rc.Close()
	status, data := adminCall(t, baseURL, apiKey, http.MethodPut, "/_sandbox/webhook-url", `{"url": "`+rc.URL+`"}`)
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.JSONEq(t, `{"url": "`+rc.URL+`", "urls": ["`+rc.URL+`"], "scheme": "standard"}`, string(data), "moving the URL keeps the scheme")

	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	sandboxRecipient(t, client)
	status, data = adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	var log struct {
		Deliveries []struct {
			EventID  string `json:"event_id"`
			Attempts []struct {
				StatusCode int    `json:"status_code"`
				Scheme     string `json:"scheme"`
			} `json:"attempts"`
		} `json:"deliveries"`
	}
	require.NoError(t, json.Unmarshal(data, &log))
	require.Len(t, log.Deliveries, 2)
	mu.Lock()
	defer mu.Unlock()
	for i, d := range log.Deliveries {
		require.Len(t, d.Attempts, 1, "verified at the first attempt")
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		assert.Equal(t, "standard", d.Attempts[0].Scheme)
		assert.Equal(t, d.EventID, got[i], "processed")
		assert.Equal(t, d.EventID, headers[i].Get(webhook.StandardIDHeader))
		assert.Empty(t, headers[i].Get(webhook.SignatureHeader))
	}
	assert.NotContains(t, stderr.String(), secret, "the secret is never logged")
	assert.NotContains(t, string(data), strings.TrimPrefix(secret, "whsec_"), "nor shown by the admin API")
}

// TestRunSchemeDefaultAndGivenSecret: the default scheme is payments, with
// no PAYMENTS_WEBHOOK_SCHEME line; a given whsec_ secret is printed as it
// is; a secret the standard scheme cannot use stops the command, without
// being repeated.
func TestRunSchemeDefaultAndGivenSecret(t *testing.T) {
	baseURL, apiKey, stdout, _ := startRun(t, "-quiet")
	_, scheme := webhookSetting(t, baseURL, apiKey)
	assert.Equal(t, "payments", scheme)
	assert.Nil(t, schemeLine.FindStringSubmatch(stdout.String()), "no scheme line for the default")
	assert.Contains(t, stdout.String(), "Signing:  the Payments-Signature header")

	given, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	baseURL, apiKey, stdout, _ = startRun(t, "-quiet", "-webhook-scheme=STANDARD", "-webhook-secret", given)
	assert.Equal(t, given, secretLine.FindStringSubmatch(stdout.String())[1])
	_, scheme = webhookSetting(t, baseURL, apiKey)
	assert.Equal(t, "standard", scheme)

	for _, bad := range []string{"not-a-whsec-secret", "whsec_not base64!"} {
		var out, errOut testlog.Buffer
		err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-webhook-scheme", "standard", "-webhook-secret", bad},
			noEnv, &out, &errOut, serverTimeouts())
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "is not a Standard Webhooks secret", bad)
		assert.NotContains(t, err.Error(), bad, "the secret is never repeated")
		assert.NotContains(t, out.String(), "Press Ctrl+C", "the sandbox did not start")
	}

	var out, errOut testlog.Buffer
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-webhook-scheme", "hmac"}, noEnv, &out, &errOut, serverTimeouts())
	require.EqualError(t, err, `-webhook-scheme "hmac": use payments (the Payments-Signature header) or standard (Standard Webhooks)`)
	err = run(context.Background(), []string{"-help"}, noEnv, &out, &errOut, serverTimeouts())
	require.Error(t, err)
	assert.Contains(t, errOut.String(), "-webhook-scheme")
}
