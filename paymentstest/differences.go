package paymentstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// The differences WithDifferences knows: each one a way in which a real
// service could plausibly differ from the SDK's assumptions
// (docs/assumptions.md), as the sandbox behind a proxy that renames or
// reshapes one thing at a time.
const (
	diffConfirmPath     = "confirm-path"
	diffQuoteFlat       = "quote-flat"
	diffQuoteRenamed    = "quote-renamed"
	diffHTMLErrors      = "html-errors"
	diffCompletedAt     = "completed-at"
	diffStatus          = "status-processing"
	diffSignatureHeader = "signature-header"
	diffListCursor      = "list-cursor"
	diffMinorUnits      = "minor-units"
	diffNumericCodes    = "numeric-codes"
	diffFieldErrors     = "field-errors"
	diffTestMarker      = "test-marker"
)

var knownDifferences = []string{
	diffConfirmPath, diffQuoteFlat, diffQuoteRenamed, diffHTMLErrors, diffCompletedAt, diffStatus,
	diffSignatureHeader, diffListCursor, diffMinorUnits, diffNumericCodes, diffFieldErrors, diffTestMarker,
}

// What the differences put in place of the assumed names.
const (
	differentConfirmPath     = "/payments/quotes/confirm"
	differentSignatureHeader = "X-Signature"
	differentTestPrefix      = "sandbox_test_"
)

// WithDifferences makes the server differ from the SDK's assumptions
// (docs/assumptions.md) in the named ways, so that a test, or payments
// doctor against the sandbox (payments-sandbox --differ), can show what a
// client meets when the real service answers otherwise. Without it the
// server follows every assumption. The names:
//
//   - confirm-path: confirm is POST /payments/quotes/confirm;
//     POST /payments/confirm answers 404.
//   - quote-flat: the quote's fields sit flat in the payment's data, with
//     no data.quote.
//   - quote-renamed: the quote's fee is fee_amount and its total_amount is
//     total.
//   - html-errors: every error answer is an HTML page (text/html), as
//     from a proxy.
//   - completed-at: payments carry an extra completed_at member.
//   - status-processing: a pending payment's status reads processing.
//   - signature-header: deliveries carry their signature in X-Signature
//     instead of Payments-Signature (same value).
//   - list-cursor: the list of events pages with a cursor query parameter
//     and a next_cursor member; after is ignored and has_more is gone.
//   - minor-units: the amounts of payments and quotes are integers in
//     minor units (100.00 reads 10000).
//   - numeric-codes: error codes are numbers, not strings.
//   - field-errors: field problems come as
//     {"errors": {"fields": [{"name", "reason"}]}}.
//   - test-marker: triggered test events mark their resource's reference
//     with sandbox_test_ instead of test_trigger_.
//
// An unknown name makes StartServer fail, naming the known ones.
func WithDifferences(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			n = strings.TrimSpace(n)
			if !slices.Contains(knownDifferences, n) {
				c.fail("WithDifferences(%q): unknown difference; known: %s", n, strings.Join(knownDifferences, ", "))
				return
			}
			if c.differences == nil {
				c.differences = differences{}
			}
			c.differences[n] = true
		}
	}
}

// differences is the set WithDifferences names; nil follows every
// assumption.
type differences map[string]bool

// request rewrites a request as the differing service reads it: another
// confirm path, another cursor parameter. bad is the answer to a request
// the differing service does not know.
func (s *Server) differRequest(r *http.Request) (*http.Request, *response) {
	d := s.differences
	if d == nil {
		return r, nil
	}
	path := r.URL.EscapedPath()
	if d[diffConfirmPath] {
		switch path {
		case "/payments/confirm":
			return r, s.fail(http.StatusNotFound, payments.CodeNotFound, "no such endpoint: "+path)
		case differentConfirmPath:
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = "/payments/confirm", ""
		}
	}
	if d[diffListCursor] && path == "/webhooks/events" {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err == nil {
			cursor := q.Get("cursor")
			q.Del("after")
			q.Del("cursor")
			if cursor != "" {
				q.Set("after", cursor)
			}
			r = r.Clone(r.Context())
			r.URL.RawQuery = q.Encode()
		}
	}
	return r, nil
}

// differAnswer reshapes an answer as the differing service sends it.
func (s *Server) differAnswer(r *http.Request, resp *response) *response {
	d := s.differences
	if d == nil || resp == nil {
		return resp
	}
	if resp.status >= 400 && d[diffHTMLErrors] {
		text := fmt.Sprintf("%d %s", resp.status, http.StatusText(resp.status))
		out := *resp
		out.header = resp.header.Clone()
		if out.header == nil {
			out.header = http.Header{}
		}
		out.header.Set("Content-Type", "text/html; charset=utf-8")
		out.body = []byte("<html><head><title>" + html.EscapeString(text) + "</title></head><body><h1>" +
			html.EscapeString(text) + "</h1><hr><center>proxy</center></body></html>\n")
		return &out
	}
	env, ok := decodeObject(resp.body)
	if !ok {
		return resp
	}
	changed := false
	if resp.status >= 400 {
		changed = s.differError(env)
	} else if data, ok := env["data"].(map[string]any); ok {
		switch path := r.URL.EscapedPath(); {
		case path == "/payments/initiate" || path == "/payments/confirm" || path == differentConfirmPath:
			changed = s.differPayment(data)
		case path == "/webhooks/events" && r.Method == http.MethodGet && d[diffListCursor]:
			next := any(nil)
			if more, _ := data["has_more"].(bool); more {
				if evs, _ := data["events"].([]any); len(evs) > 0 {
					if last, ok := evs[len(evs)-1].(map[string]any); ok {
						next = last["id"]
					}
				}
			}
			delete(data, "has_more")
			data["next_cursor"], changed = next, true
		}
	}
	if !changed {
		return resp
	}
	body, err := json.Marshal(env)
	if err != nil {
		return resp
	}
	out := *resp
	out.body = body
	return &out
}

// differError reshapes an error envelope's code and field problems.
func (s *Server) differError(env map[string]any) bool {
	changed := false
	if code, ok := env["code"].(string); ok && s.differences[diffNumericCodes] && code != "" {
		env["code"], changed = numericCode(code), true
	}
	if list, ok := env["errors"].([]any); ok && s.differences[diffFieldErrors] {
		fields := make([]any, 0, len(list))
		for _, item := range list {
			if f, ok := item.(map[string]any); ok {
				fields = append(fields, map[string]any{"name": f["field"], "reason": f["message"]})
			}
		}
		env["errors"], changed = map[string]any{"fields": fields}, true
	}
	return changed
}

// numericCode is the number a differing service sends for a code: stable,
// and never a string.
func numericCode(code string) json.Number {
	n := 1000
	for _, c := range code {
		n = (n*31 + int(c)) % 9000
	}
	return json.Number(fmt.Sprint(1000 + n))
}

// differPayment reshapes a payment (an API answer's data, or an event's):
// its status, an extra member, its amounts and its quote.
func (s *Server) differPayment(p map[string]any) bool {
	d := s.differences
	if _, ok := p["reference"]; !ok {
		return false
	}
	changed := false
	if d[diffStatus] && p["status"] == string(payments.PaymentStatusPending) {
		p["status"], changed = "processing", true
	}
	if d[diffCompletedAt] {
		var at any
		if done, _ := p["is_completed"].(bool); done {
			at = p["updated_at"]
		}
		p["completed_at"], changed = at, true
	}
	q, _ := p["quote"].(map[string]any)
	if d[diffMinorUnits] {
		changed = minorUnits(p, "amount") || changed
		if q != nil {
			for _, k := range []string{"amount", "fee", "total_amount"} {
				changed = minorUnits(q, k) || changed
			}
		}
	}
	if q != nil && d[diffQuoteRenamed] {
		q["fee_amount"], q["total"] = q["fee"], q["total_amount"]
		delete(q, "fee")
		delete(q, "total_amount")
		changed = true
	}
	if q != nil && d[diffQuoteFlat] {
		delete(p, "quote")
		for k, v := range q {
			if _, taken := p[k]; !taken {
				p[k] = v
			}
		}
		changed = true
	}
	return changed
}

// minorUnits turns the decimal string at o[k] into an integer of hundredths.
func minorUnits(o map[string]any, k string) bool {
	s, ok := o[k].(string)
	if !ok {
		return false
	}
	v, err := decimal.NewFromString(s)
	if err != nil {
		return false
	}
	o[k] = json.Number(v.Shift(2).Round(0).String())
	return true
}

// differEvent reshapes the data of an event before it is logged and
// delivered, so that the list of events and the deliveries agree.
func (s *Server) differEvent(t payments.EventType, data json.RawMessage) json.RawMessage {
	if s.differences == nil {
		return data
	}
	o, ok := decodeObject(data)
	if !ok {
		return data
	}
	changed := false
	if strings.HasPrefix(string(t), "payment.") {
		changed = s.differPayment(o)
	}
	if ref, _ := o["reference"].(string); s.differences[diffTestMarker] && strings.HasPrefix(ref, triggeredPrefix) {
		o["reference"], changed = differentTestPrefix+strings.TrimPrefix(ref, triggeredPrefix), true
	}
	if !changed {
		return data
	}
	out, err := json.Marshal(o)
	if err != nil {
		return data
	}
	return out
}

// signatureHeader is the header that carries a delivery's
// Payments-Signature.
func (d differences) signatureHeader(name string) string {
	if d[diffSignatureHeader] && http.CanonicalHeaderKey(name) == webhook.SignatureHeader {
		return differentSignatureHeader
	}
	return name
}

// decodeObject decodes a JSON object, keeping numbers as they are written.
func decodeObject(b []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var o map[string]any
	if dec.Decode(&o) != nil || o == nil {
		return nil, false
	}
	return o, true
}
