package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// adminCall sends one admin request and returns the status and data.
func adminCall(t *testing.T, baseURL, apiKey, method, path, body string) (int, json.RawMessage) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, baseURL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return resp.StatusCode, env.Data
}

func webhookURLSetting(t *testing.T, baseURL, apiKey string) string {
	t.Helper()
	status, data := adminCall(t, baseURL, apiKey, http.MethodGet, "/_sandbox/webhook-url", "")
	require.Equal(t, http.StatusOK, status)
	var v struct{ URL string }
	require.NoError(t, json.Unmarshal(data, &v))
	return v.URL
}

// TestRunDefaultWebhookURL: without -webhook-url, events go where
// examples/webhook-receiver listens by default.
func TestRunDefaultWebhookURL(t *testing.T) {
	baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), "-quiet")
	assert.Equal(t, "http://localhost:8080/webhooks", defaultWebhookURL)
	assert.Contains(t, stdout.String(), "Webhooks: http://localhost:8080/webhooks")
	assert.Equal(t, defaultWebhookURL, webhookURLSetting(t, baseURL, apiKey))
	assert.Regexp(t, `(?m)^export PAYMENTS_WEBHOOK_SECRET=pssec_[0-9a-f]{32}$`, stdout.String())

	// The receiver's default address is :8080, and it serves /webhooks.
	src, err := os.ReadFile("../../examples/webhook-receiver/main.go")
	require.NoError(t, err)
	assert.Regexp(t, `const defaultAddr = ":8080"`, string(src))
	assert.Contains(t, string(src), `mux.Handle("/webhooks",`)
}

// TestRunWebhookURLOffThenSet: -webhook-url none (or "") turns deliveries
// off; the admin API points them at a receiver later, signed with the
// printed secret.
func TestRunWebhookURLOffThenSet(t *testing.T) {
	for _, off := range [][]string{{"-webhook-url", "none"}, {"-webhook-url", ""}, {"-webhook-url=NONE"}} {
		baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), append(off, "-quiet")...)
		assert.Contains(t, stdout.String(), "Webhooks: off", "%q", off)
		assert.Equal(t, "", webhookURLSetting(t, baseURL, apiKey), "%q", off)
	}

	baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), "-webhook-url", "none", "-quiet", "-webhook-retry-wait", "1ms")
	secret := secretLine.FindStringSubmatch(stdout.String())[1]
	v, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []payments.EventType
	rc := httptest.NewServer(webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.Type)
		return nil
	}))
	defer rc.Close()

	status, data := adminCall(t, baseURL, apiKey, http.MethodPut, "/_sandbox/webhook-url", `{"url": "`+rc.URL+`/webhooks"}`)
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.JSONEq(t, `{"url": "`+rc.URL+`/webhooks", "urls": ["`+rc.URL+`/webhooks"], "scheme": "payments"}`, string(data))
	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	_, err = client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	status, data = adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []payments.EventType{payments.EventPaymentCompleted}, got, "delivered and verified with the printed secret")
}

// TestRunWebhookURLsRoundRobin: -webhook-url with three URLs,
// comma-separated, sends the deliveries to three replicas of a receiver in
// turn, each verifying with the printed secret.
func TestRunWebhookURLsRoundRobin(t *testing.T) {
	var mu sync.Mutex
	got := map[int][]string{}
	var urls []string
	var secret string
	for i := range 3 {
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			ev, err := webhook.ConstructEvent(body, r.Header, secret)
			if err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			mu.Lock()
			got[i] = append(got[i], ev.ID)
			mu.Unlock()
		}))
		defer rc.Close()
		urls = append(urls, rc.URL+"/webhooks")
	}
	const fixed = "pssec_0123456789abcdef0123456789abcdef"
	secret = fixed
	baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), "-webhook-url", strings.Join(urls, ","), "-webhook-secret", fixed, "-quiet")
	assert.Contains(t, stdout.String(), "Webhooks: round robin to "+strings.Join(urls, ", "))
	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	for range 6 {
		_, err = client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
		require.NoError(t, err)
	}
	status, data := adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	mu.Lock()
	defer mu.Unlock()
	for i := range 3 {
		assert.Len(t, got[i], 2, "receiver %d", i)
	}
}

// TestRunExportLinesSurviveTheShell: the printed export lines, pasted into
// a shell, give back the exact values, quoted when they need it.
func TestRunExportLinesSurviveTheShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to paste the export lines into")
	}
	const key, secret = `key-with-"quotes"`, `it's $HOME`
	_, _, stdout, _ := startRun(t, "-api-key", key, "-webhook-secret", secret, "-quiet")
	var exports []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "export ") {
			exports = append(exports, line)
		}
	}
	require.Len(t, exports, 3, "%s", stdout)
	assert.Equal(t, `export PAYMENTS_WEBHOOK_SECRET='it'\''s $HOME'`, exports[2])
	script := strings.Join(exports, "\n") + "\nprintf '%s\\n%s' \"$PAYMENTS_API_KEY\" \"$PAYMENTS_WEBHOOK_SECRET\""
	out, err := exec.Command(bash, "-c", script).Output()
	require.NoError(t, err)
	assert.Equal(t, key+"\n"+secret, string(out))
}

// TestRunClosesIdleConnections: the sandbox's server times out connections
// that sit idle, with or without a request before.
func TestRunClosesIdleConnections(t *testing.T) {
	short := httpTimeouts{
		ReadHeader: 50 * time.Millisecond, Read: 100 * time.Millisecond,
		Write: 100 * time.Millisecond, Idle: 50 * time.Millisecond,
	}
	baseURL, _, _, _ := startRunTimeouts(t, short, "-webhook-url", "none", "-quiet")
	addr := strings.TrimPrefix(baseURL, "http://")

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /_sandbox/clock HTTP/1.1\r\nHost: sandbox\r\n\r\n") // unauthenticated
	require.NoError(t, err)
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.False(t, resp.Close, "kept alive after the answer")
	assert.True(t, closedByServer(t, conn, rd), "the idle keep-alive connection was closed")

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	assert.True(t, closedByServer(t, silent, silent), "a connection that never sends was closed")
}

// closedByServer reports whether the server closes conn by itself. The
// deadline only bounds a failing test.
func closedByServer(t *testing.T, conn net.Conn, rd io.Reader) bool {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := rd.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// TestServerTimeoutsMatchReceiver: the sandbox's timeouts are those of
// examples/webhook-receiver's server.
func TestServerTimeoutsMatchReceiver(t *testing.T) {
	src, err := os.ReadFile("../../examples/webhook-receiver/main.go")
	require.NoError(t, err)
	field := func(name string) time.Duration {
		m := regexp.MustCompile(name + `:\s+(\d+) \* time\.Second`).FindSubmatch(src)
		require.NotNil(t, m, "%s in the receiver's http.Server", name)
		d, err := time.ParseDuration(string(m[1]) + "s")
		require.NoError(t, err)
		return d
	}
	assert.Equal(t, httpTimeouts{
		ReadHeader: field("ReadHeaderTimeout"),
		Read:       field("ReadTimeout"),
		Write:      field("WriteTimeout"),
		Idle:       field("IdleTimeout"),
	}, serverTimeouts())
}
