package openapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

const (
	stan      = `"stan":"7d1c4b6e-2f0a-4c8e-9b1a-0d2e3f4a5b6c"`
	paymentID = `"id":"3f6c1f7e-8a2b-4c1d-9e0f-1a2b3c4d5e6f","reference":"order-1","amount":"100.00","currency":"NGN"`
	quote     = `"quote":{"quote_id":"q1","amount":"100.00","fee":"1.50","exchange_rate":"1","total_amount":"101.50","currency":"NGN"}`
)

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// Each way a service could plausibly differ is a violation that names the
// row of docs/assumptions.md it breaks, or, for what the document allows
// but does not describe, an Unknown one from the strict contract only.
func TestCheckResponseNamesTheAssumption(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	initiate, _ := http.NewRequest(http.MethodPost, "https://h/payments/initiate", nil)
	list, _ := http.NewRequest(http.MethodGet, "https://h/api/webhooks/events?limit=2", nil)
	for _, tc := range []struct {
		name           string
		req            *http.Request
		status         int
		header         http.Header
		body           string
		where, row     string
		unknown, loose bool // loose: the lenient contract lets it pass
	}{
		{name: "the quote's fields renamed", req: initiate, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending","quote":{"quote_id":"q1","amount":"100.00","fee_amount":"1.50","exchange_rate":"1","total":"101.50","currency":"NGN"}}}`,
			where: "response body /data/quote/fee", row: "Quote in the initiate response"},
		{name: "amounts as numbers", req: initiate, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending","quote":{"quote_id":"q1","amount":"100.00","fee":150,"exchange_rate":"1","total_amount":"101.50","currency":"NGN"}}}`,
			where: "response body /data/quote/fee", row: "Quote in the initiate response"},
		{name: "no quote at all", req: initiate, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending"}}`,
			where: "response body /data", row: "Quote in the initiate response"},
		{name: "another success status", req: initiate, status: 202, header: jsonHeader(),
			body:  `{}`,
			where: "response status", row: "Status codes"},
		{name: "a numeric error code", req: initiate, status: 422, header: jsonHeader(),
			body:  `{"success":false,"message":"no",` + stan + `,"code":1001}`,
			where: "response body /code", row: "Error codes"},
		{name: "an HTML error page", req: initiate, status: 502, header: http.Header{"Content-Type": {"text/html"}},
			body:  `<html>Bad gateway</html>`,
			where: "response header Content-Type", row: "Error body"},
		{name: "no has_more", req: list, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{"events":[],"next_cursor":"x"}}`,
			where: "response body /data/has_more", row: "List events"},
		{name: "a Retry-After that is neither seconds nor a date", req: list, status: 503,
			header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"soon"}},
			body:   `{"success":false,"message":"busy",` + stan + `}`,
			where:  "response header Retry-After", row: "Retryable answers"},
		{name: "an Idempotent-Replayed other than true", req: initiate, status: 200,
			header: http.Header{"Content-Type": {"application/json"}, "Idempotent-Replayed": {"yes"}},
			body:   `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending",` + quote + `}}`,
			where:  "response header Idempotent-Replayed", row: "Idempotency"},
		{name: "a status the SDK does not know", req: initiate, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"processing",` + quote + `}}`,
			where: "response body /data/status", unknown: true, loose: true},
		{name: "an extra member", req: initiate, status: 200, header: jsonHeader(),
			body:  `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending","completed_at":"2026-01-01T00:00:00Z",` + quote + `}}`,
			where: "response body /data/completed_at", unknown: true, loose: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckResponse(tc.req, tc.status, tc.header, []byte(tc.body))
			if tc.loose && err != nil {
				t.Fatalf("the lenient contract refused it: %v", err)
			}
			err = c.Strict().CheckResponse(tc.req, tc.status, tc.header, []byte(tc.body))
			var vs Violations
			if !errors.As(err, &vs) {
				t.Fatalf("got %v, want Violations", err)
			}
			for _, v := range vs {
				if v.Where == tc.where {
					if v.Assumption != tc.row || v.Unknown != tc.unknown {
						t.Fatalf("got %+v (%q), want the row %q (unknown %t)", v, v.Assumption, tc.row, tc.unknown)
					}
					if strings.Contains(v.Error(), "101.50") && !tc.unknown {
						t.Logf("%v", v)
					}
					return
				}
			}
			t.Fatalf("no violation at %s: %v", tc.where, err)
		})
	}
}

// A well-formed answer holds the strict contract, with the base URL's path
// prefix in front of the operation's path.
func TestCheckResponseAcceptsTheAssumedAnswer(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://h/api/v1/payments/initiate", nil)
	body := `{"success":true,"message":"ok",` + stan + `,"data":{` + paymentID + `,"status":"pending",` + quote + `}}`
	if err := c.Strict().CheckResponse(req, 200, jsonHeader(), []byte(body)); err != nil {
		t.Fatal(err)
	}
	if got := c.Operation(req); got != "payments.initiate" {
		t.Fatalf("Operation: %q", got)
	}
	other, _ := http.NewRequest(http.MethodDelete, "https://h/payments/initiate", nil)
	var v *Violation
	if err := c.CheckResponse(other, 200, jsonHeader(), []byte(body)); !errors.As(err, &v) || v.Operation != "" {
		t.Fatalf("an unknown operation: %v", err)
	}
}
