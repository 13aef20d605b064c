package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// envOf is the environment of a map from variable names to values.
func envOf(m map[string]string) environment {
	return environment{Secret: m[envSecret], Scheme: m[envScheme], Store: m[envStore], Addr: m[envAddr],
		ReconcileEvery: m[envReconcileEvery], ReconcileWindow: m[envReconcileWindow]}
}

func loadEnv(env map[string]string) (config, error) { return loadConfig(envOf(env)) }

// TestMainReadsTheDocumentedVariables: main reads, with os.Getenv, exactly
// the variables the package documentation lists.
func TestMainReadsTheDocumentedVariables(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Getenv" && len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok {
					read = append(read, strings.Trim(lit.Value, `"`))
				}
			}
		}
		return true
	})
	documented := regexp.MustCompile(`(?m)^\t(PAYMENTS_[A-Z_]+)  `).FindAllStringSubmatch(f.Doc.Text(), -1)
	var doc []string
	for _, m := range documented {
		doc = append(doc, m[1])
	}
	slices.Sort(read)
	slices.Sort(doc)
	want := []string{envReconcileEvery, envReconcileWindow, envAddr, envScheme, envSecret, envStore}
	if !slices.Equal(read, want) || !slices.Equal(doc, want) {
		t.Errorf("main reads %v and its documentation lists %v; want %v", read, doc, want)
	}
}

func TestLoadConfig(t *testing.T) {
	std, err := webhook.NewStandardSecret()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadEnv(map[string]string{envSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.verifier.(*webhook.SignatureVerifier); !ok || cfg.addr != defaultAddr || cfg.store.kind != "memory" {
		t.Errorf("defaults: %T, %q, %q", cfg.verifier, cfg.addr, cfg.store.kind)
	}
	for scheme, want := range map[string]string{"payments": "*webhook.SignatureVerifier", " Standard ": "*webhook.StandardVerifier"} {
		cfg, err := loadEnv(map[string]string{envSecret: std, envScheme: scheme, envAddr: "127.0.0.1:9"})
		if err != nil {
			t.Fatalf("%q: %v", scheme, err)
		}
		var got string
		switch cfg.verifier.(type) {
		case *webhook.SignatureVerifier:
			got = "*webhook.SignatureVerifier"
		case *webhook.StandardVerifier:
			got = "*webhook.StandardVerifier"
		}
		if got != want || cfg.addr != "127.0.0.1:9" {
			t.Errorf("%q: %T at %s, want %s", scheme, cfg.verifier, cfg.addr, want)
		}
	}
}

// TestLoadConfigRefusesBadValues: each bad value gets a message that says
// what to set, every problem is reported at once, and no message repeats a
// secret or a password.
func TestLoadConfigRefusesBadValues(t *testing.T) {
	const pw = "hunter2secret"
	for name, c := range map[string]struct {
		env  map[string]string
		want []string
	}{
		"no secret": {map[string]string{}, []string{"PAYMENTS_WEBHOOK_SECRET is not set"}},
		"unknown scheme": {map[string]string{envSecret: "s", envScheme: "hmac"},
			[]string{`PAYMENTS_WEBHOOK_SCHEME="hmac": use payments`, "or standard"}},
		"standard with a secret that is not whsec_": {map[string]string{envSecret: "whsec_" + pw + "!", envScheme: "standard"},
			[]string{"PAYMENTS_WEBHOOK_SECRET: PAYMENTS_WEBHOOK_SCHEME=standard takes whsec_ secrets", "secret 0 is not whsec_"}},
		"unsupported store": {map[string]string{envSecret: "s", envStore: "mysql://app:" + pw + "@db/app"},
			[]string{`PAYMENTS_WEBHOOK_STORE=mysql://app:xxxxx@db/app: unsupported scheme "mysql"`, "postgres://", "redis://", "leave it unset"}},
		"http store": {map[string]string{envSecret: "s", envStore: "https://cache.example/"},
			[]string{`unsupported scheme "https"`}},
		"keyword/value DSN": {map[string]string{envSecret: "s", envStore: "host=db password=" + pw},
			[]string{"PAYMENTS_WEBHOOK_STORE is not a URL such as postgres://"}},
		"host:port": {map[string]string{envSecret: "s", envStore: "localhost:6379"},
			[]string{"PAYMENTS_WEBHOOK_STORE is not a URL"}},
		"unparsable URL": {map[string]string{envSecret: "s", envStore: "postgres://app:" + pw + "@db:port/app"},
			[]string{"PAYMENTS_WEBHOOK_STORE is not a URL"}},
		"everything at once": {map[string]string{envScheme: "v2", envStore: "mongodb://db"},
			[]string{"PAYMENTS_WEBHOOK_SECRET is not set", `PAYMENTS_WEBHOOK_SCHEME="v2"`, `unsupported scheme "mongodb"`}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadEnv(c.env)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

// TestStandardSchemeWiring: with PAYMENTS_WEBHOOK_SCHEME=standard the
// receiver verifies Standard Webhooks signatures and dedupes on webhook-id;
// a Payments-Signature delivery, or one signed with another secret, is
// refused.
func TestStandardSchemeWiring(t *testing.T) {
	secret, err := webhook.NewStandardSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, err := webhook.NewStandardSecret()
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	srv := httptest.NewServer(testMux(t, map[string]string{envSecret: secret, envScheme: "standard"},
		slog.New(slog.NewJSONHandler(&logs, nil))))
	defer srv.Close()

	const id = "0f8e2c9a-6b1d-4e3f-9a7c-5d2b1e0f3a4c"
	body := []byte(`{"id":"` + id + `","event":"virtual_account.payment_received","created_at":"2024-05-01T10:00:00Z",` +
		`"data":{"amount":"5000.00","currency":"NGN","virtual_account_id":"va-1"}}`)
	post := func(h http.Header) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	sign := func(secret string, at time.Time) http.Header {
		h, err := webhook.SignStandard(id, at, body, secret)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	if got := post(sign(secret, time.Now())); got != http.StatusOK {
		t.Fatalf("signed delivery: %d", got)
	}
	if got := post(sign(secret, time.Now().Add(time.Second))); got != http.StatusOK {
		t.Fatalf("redelivery: %d", got)
	}
	if got := post(sign(other, time.Now())); got != http.StatusUnauthorized {
		t.Errorf("another secret: %d", got)
	}
	if got := post(http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, time.Now(), secret)}}); got != http.StatusUnauthorized {
		t.Errorf("a Payments-Signature delivery: %d", got)
	}
	if n := strings.Count(logs.String(), `"msg":"money received"`); n != 1 {
		t.Errorf("processed %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("the logs show the secret")
	}
}
