package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

const testSecret = "whsec_example_test_only"

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
	mux, err := newMux([]string{"whsec_old", testSecret}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
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
			req.Header.Set(payments.SignatureHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	if got := post(payments.SignPayload(body, time.Now(), testSecret)); got != http.StatusOK {
		t.Fatalf("signed delivery: status %d", got)
	}
	if got := post(payments.SignPayload(body, time.Now(), testSecret)); got != http.StatusOK {
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
