package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

const testSecret = "whsec_example_test_only"

// testMux is newMux with the in-memory store and the verifier the
// environment env describes.
func testMux(t *testing.T, env map[string]string, logger *slog.Logger) http.Handler {
	t.Helper()
	cfg, err := loadConfig(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	mux, _ := newMux(cfg.verifier, webhook.NewMemoryClaimStore(0), logger)
	return mux
}

func TestParseSecrets(t *testing.T) {
	got := parseSecrets(" old , ,new,")
	if len(got) != 2 || got[0] != "old" || got[1] != "new" {
		t.Fatalf("parseSecrets = %q", got)
	}
	if got := parseSecrets(""); len(got) != 0 {
		t.Fatalf("parseSecrets(\"\") = %q", got)
	}
}

func TestReceiverWiring(t *testing.T) {
	var logs bytes.Buffer
	mux := testMux(t, map[string]string{envSecret: "whsec_old, " + testSecret}, slog.New(slog.NewTextHandler(&logs, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := []byte(`{"id":"0f8e2c9a-6b1d-4e3f-9a7c-5d2b1e0f3a4c","event":"virtual_account.payment_received",` +
		`"created_at":"2024-05-01T10:00:00Z","data":{"amount":"5000.00","currency":"NGN","virtual_account_id":"va-1",` +
		`"account_number":"9912345678"}}`)
	post := func(sig string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if sig != "" {
			req.Header.Set(webhook.SignatureHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	if got := post(webhook.SignPayload(body, time.Now(), testSecret)); got != http.StatusOK {
		t.Fatalf("signed delivery: status %d", got)
	}
	if got := post(webhook.SignPayload(body, time.Now(), testSecret)); got != http.StatusOK {
		t.Fatalf("duplicate delivery: status %d", got)
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Fatalf("unsigned delivery: status %d", got)
	}
	resp, err := http.Get(srv.URL + "/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}

	out := logs.String()
	if strings.Count(out, "money received") != 1 {
		t.Errorf("the event was not processed exactly once:\n%s", out)
	}
	for _, secret := range []string{testSecret, "whsec_old", "9912345678"} {
		if strings.Contains(out, secret) {
			t.Errorf("logs contain %q:\n%s", secret, out)
		}
	}
}

// listeningAddr returns the addr of the "listening" log line, or "".
func listeningAddr(t *testing.T, logs string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			return rec.Addr
		}
	}
	return ""
}

// TestServeBindsBeforeLogging: "listening" is logged only once the port is
// bound, so a client may connect the moment it reads the line; a second
// instance on the same port fails with a clear error and never claims to
// listen.
func TestServeBindsBeforeLogging(t *testing.T) {
	mux := testMux(t, map[string]string{envSecret: testSecret}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first testlog.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", mux, nil, slog.New(slog.NewJSONHandler(&first, nil))) }()
	var addr string
	deadline := time.Now().Add(10 * time.Second)
	for addr == "" && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve returned %v", err)
		case <-time.After(time.Millisecond):
		}
		addr = listeningAddr(t, first.String())
	}
	if addr == "" {
		t.Fatalf("no listening line:\n%s", first.String())
	}
	resp, err := http.Get("http://" + addr + "/healthz") // no retry: bound before the log line
	if err != nil {
		t.Fatalf("connecting right after the listening line: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}

	var second testlog.Buffer
	err = serve(context.Background(), addr, mux, nil, slog.New(slog.NewJSONHandler(&second, nil)))
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("a second instance on %s: got %v, want address already in use", addr, err)
	}
	for _, want := range []string{"cannot listen on " + addr, "PAYMENTS_WEBHOOK_ADDR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(second.String(), "listening") {
		t.Errorf("the second instance logged listening:\n%s", second.String())
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if !strings.Contains(first.String(), "shutting down") {
		t.Errorf("no shutdown line:\n%s", first.String())
	}
}
