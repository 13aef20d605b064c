package openapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// A violation says where, what, and which row of docs/assumptions.md to read
// next; Violations lists each and lets errors.As find the first. No value of
// the body is printed (an account number here).
func TestViolationError(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://h/payments/initiate", nil)
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Idempotency-Key", "k-1")
	req.Header.Set("Content-Type", "application/json")
	err = c.CheckRequest(req, []byte(`{"amount":10,"currency":"ngn","reference":"r","description":"0123456789"}`))
	var vs Violations
	if !errors.As(err, &vs) || len(vs) != 2 {
		t.Fatalf("got %v, want two violations", err)
	}
	var first *Violation
	if !errors.As(err, &first) || first != vs[0] {
		t.Fatalf("errors.As found %v", first)
	}
	want := map[string]string{
		"request body /currency":     "Field bounds",
		"request body /recipient_id": "Required initiate fields",
	}
	for _, v := range vs {
		if want[v.Where] != v.Assumption {
			t.Errorf("%s: row %q, want %q", v.Where, v.Assumption, want[v.Where])
		}
	}
	msg := err.Error()
	for _, s := range []string{`payments.initiate: request body /recipient_id: is missing (breaks the assumption "Required initiate fields"`,
		"docs/assumptions.md", "\n"} {
		if !strings.Contains(msg, s) {
			t.Errorf("the message lacks %q:\n%s", s, msg)
		}
	}
	if strings.Contains(msg, "ngn") {
		t.Errorf("the message prints a value:\n%s", msg)
	}

	// A request without an Idempotency-Key, and without a key at all.
	req.Header.Del("Idempotency-Key")
	req.Header.Del("Authorization")
	err = c.CheckRequest(req, []byte(`{"amount":10,"currency":"NGN","recipient_id":"3f6c1f7e-8a2b-4c1d-9e0f-1a2b3c4d5e6f","reference":"r"}`))
	got := map[string]string{}
	if errors.As(err, &vs) {
		for _, v := range vs {
			got[v.Where] = v.Assumption
		}
	}
	if a, ok := got["request header Idempotency-Key"]; !ok || a != "Idempotency" {
		t.Errorf("no Idempotency violation: %v", err)
	}
	if a, ok := got["request header Authorization"]; !ok || a != "" {
		t.Errorf("no Authorization violation: %v", err)
	}
}
