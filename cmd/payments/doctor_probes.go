package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The probes that ask and create nothing: they run in --production too.

// probeWithoutKey lists events without the key: 401 and the error
// envelope.
func (d *doctor) probeWithoutKey(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1", nil, false)
	if !d.check(o, "Error body", "Error body", "Error codes") {
		return
	}
	if o.status != http.StatusUnauthorized {
		d.rep.differ("Status codes", fmt.Sprintf("a request without the key answered HTTP %d, not 401", o.status))
	} else if code, _ := o.obj["code"].(string); code != "" && code != "unauthorized" {
		d.rep.differ("Error codes", d.scrub(fmt.Sprintf("a request without the key: code %q, not unauthorized", code)))
	}
}

// probeListEvents lists one page of events: the page's shape, and the
// service's clock for the triggered events.
func (d *doctor) probeListEvents(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1", nil, true)
	d.start = time.Now().Add(-time.Minute)
	if t, err := http.ParseTime(o.header.Get("Date")); err == nil {
		d.start = t.Add(-2 * time.Second)
	}
	if o.err != nil {
		d.rep.differ("Base URL", d.scrub(fmt.Sprintf("no answer at %s: %v", d.cfg.baseURL, o.err)))
		return
	}
	if o.status == http.StatusNotFound {
		d.rep.differ("List events", "GET /webhooks/events answered 404: the service lists events elsewhere, or not at all")
		return
	}
	if d.check(o, "List events", "List events", "Status codes") && o.obj != nil {
		d.rep.hold("Base URL", "the service answers the envelope at "+d.scrub(d.cfg.baseURL))
	}
}

// probeUnknownCursor lists after an id no event has: 400 unknown_cursor.
func (d *doctor) probeUnknownCursor(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1&after="+newUUID(), nil, true)
	if o.err != nil || o.status < 400 {
		if o.err == nil {
			d.rep.differ("List events", fmt.Sprintf("after=<an id no event has> answered HTTP %d, not 400 unknown_cursor: the service ignores after, or pages another way", o.status))
		}
		return
	}
	if !d.check(o, "Error body", "Error body", "Error codes") {
		return
	}
	if code, _ := o.obj["code"].(string); o.status != http.StatusBadRequest || code != "unknown_cursor" {
		d.rep.differ("List events", d.scrub(fmt.Sprintf("after=<an id no event has>: HTTP %d code %q, not 400 unknown_cursor", o.status, code)))
	}
}

// rateHeaders are the headers that tell a rate limit.
var rateHeaders = []string{"Retry-After", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Rate-Limit-Limit"}

// probeHeaders looks for rate-limit headers in every answer seen.
func (d *doctor) probeHeaders() {
	var seen []string
	for _, o := range d.obs {
		for _, h := range rateHeaders {
			if v := o.header.Get(h); v != "" {
				if s := fmt.Sprintf("%s: %s (%s)", h, v, o.what()); !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			}
		}
	}
	switch {
	case len(d.obs) == 0:
	case len(seen) > 0:
		d.rep.differ("Rate limit", d.scrub("the service publishes a rate limit: "+strings.Join(seen, "; ")))
	default:
		d.rep.hold("Rate limit", fmt.Sprintf("no rate-limit header in %d answers", len(d.obs)))
	}
}

// The probes that create a recipient and a payment (never confirmed).

// recipientBody is the probe recipient: made-up data, no person's.
func (d *doctor) recipientBody(name string) []byte {
	b, _ := json.Marshal(map[string]any{
		"account_number": "0123456789", "account_name": name, "account_type": "business", "account_currency": d.cfg.currency,
	})
	return b
}

// probeRecipient creates a recipient with an Idempotency-Key, replays it,
// and reuses the key with another body. It returns the recipient's id.
func (d *doctor) probeRecipient(ctx context.Context) string {
	key := "doctor-" + newUUID()
	body := d.recipientBody("payments doctor probe")
	first := d.send(ctx, http.MethodPost, "/payments/recipients", body, true, "Idempotency-Key", key)
	if !d.check(first, "Status codes", "Status codes") && first.status >= 300 {
		d.cannotAfter(first, "Idempotency", "Identifiers", "Quote in the initiate response", "Payment statuses", "Payment fields", "Other request fields")
		return ""
	}
	id, _ := first.data()["id"].(string)
	if isUUID(id) {
		d.rep.hold("Identifiers", "the recipient's id is a UUID")
	} else {
		d.rep.differ("Identifiers", d.scrub(fmt.Sprintf("the recipient's id is %s %v, not a UUID", kindOf(first.data()["id"]), first.data()["id"])))
	}
	d.checkReplay(ctx, first, body, key)
	reused := d.send(ctx, http.MethodPost, "/payments/recipients", d.recipientBody("payments doctor probe, another body"), true, "Idempotency-Key", key)
	if d.check(reused, "Error body", "Error body", "Error codes") {
		if code, _ := reused.obj["code"].(string); reused.status != http.StatusUnprocessableEntity || code != "idempotency_key_reused" {
			d.rep.differ("Idempotency", d.scrub(fmt.Sprintf("the key again with another body: HTTP %d code %q, not 422 idempotency_key_reused", reused.status, code)))
		}
	}
	return id
}

// checkReplay sends first's request again with its key: the same status
// and body, marked Idempotent-Replayed: true.
func (d *doctor) checkReplay(ctx context.Context, first *observation, body []byte, key string) {
	again := d.send(ctx, first.req.Method, first.req.URL.RequestURI(), body, true, "Idempotency-Key", key)
	switch {
	case again.err != nil:
		d.rep.cannot("Idempotency", d.scrub(fmt.Sprintf("the replay of %s got no answer: %v", first.what(), again.err)))
	case again.status != first.status || !bytes.Equal(again.body, first.body):
		d.rep.differ("Idempotency", fmt.Sprintf("%s sent again with its key: HTTP %d and another body, not the first answer (HTTP %d) replayed", first.what(), again.status, first.status))
	case again.header.Get("Idempotent-Replayed") != "true":
		d.rep.differ("Idempotency", fmt.Sprintf("%s replayed the first answer without Idempotent-Replayed: true", first.what()))
	default:
		d.rep.hold("Idempotency", first.what()+" with its key again: the first answer, Idempotent-Replayed: true")
	}
}

// probeInitiate initiates a payment to the recipient and replays it. The
// quote is never confirmed: it expires.
func (d *doctor) probeInitiate(ctx context.Context, recipientID string) {
	if recipientID == "" {
		return
	}
	amount := decimal.RequireFromString("100.00")
	body, _ := json.Marshal(map[string]any{
		"amount": json.Number("100.00"), "currency": d.cfg.currency, "recipient_id": recipientID,
		"reference": "doctor-" + newUUID()[:18], "description": "payments doctor probe: never confirmed",
	})
	key := "doctor-" + newUUID()
	o := d.send(ctx, http.MethodPost, "/payments/initiate", body, true, "Idempotency-Key", key)
	if o.err == nil && o.status >= 400 {
		d.check(o, "Error body", "Error body", "Error codes")
		d.rep.differ("Other request fields", d.scrub(fmt.Sprintf("an initiate with the specification's fields only was refused: HTTP %d %v", o.status, o.obj["message"])))
		d.cannotAfter(o, "Quote in the initiate response", "Payment statuses", "Payment fields")
		return
	}
	rows := []string{"Status codes", "Quote in the initiate response", "Payment statuses", "Payment fields", "Other request fields", "Identifiers"}
	d.check(o, "Payment fields", rows...)
	p := o.data()
	if id := p["id"]; !isUUID(id) {
		d.rep.differ("Identifiers", d.scrub(fmt.Sprintf("the payment's id is %s %v, not a UUID", kindOf(id), id)))
	}
	if q, _ := p["quote"].(map[string]any); q != nil {
		if s, _ := q["amount"].(string); s != "" {
			if got, err := decimal.NewFromString(s); err == nil && !got.Equal(amount) {
				d.rep.differ("Quote in the initiate response", fmt.Sprintf("data.quote.amount is %s where %s was sent", s, amount.StringFixed(2)))
			}
		} else if n, ok := q["amount"].(json.Number); ok {
			d.rep.differ("Quote in the initiate response", fmt.Sprintf("data.quote.amount is the number %s where %s was sent: minor units?", n, amount.StringFixed(2)))
		}
	}
	d.checkReplay(ctx, o, body, key)
}

// probeInvalidInitiate initiates with an empty body: the error envelope,
// a string code, and field errors naming the required fields.
func (d *doctor) probeInvalidInitiate(ctx context.Context) {
	o := d.send(ctx, http.MethodPost, "/payments/initiate", []byte(`{}`), true, "Idempotency-Key", "doctor-"+newUUID())
	if o.err == nil && o.status < 400 {
		d.rep.differ("Required initiate fields", fmt.Sprintf("an initiate with an empty body answered HTTP %d", o.status))
		return
	}
	if !d.check(o, "Error body", "Error body", "Error codes") {
		d.rep.cannot("Required initiate fields", "the refusal of an empty initiate is not in the assumed shape (see Error body)")
		return
	}
	names := fieldNames(o.obj["errors"])
	var missing []string
	for _, f := range []string{"amount", "currency", "recipient_id", "reference"} {
		if !slices.Contains(names, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		d.rep.differ("Required initiate fields", d.scrub(fmt.Sprintf("an empty initiate's field errors name %s, not %s", strings.Join(names, ", "), strings.Join(missing, ", "))))
	} else {
		d.rep.hold("Required initiate fields", "an empty initiate's field errors name amount, currency, recipient_id, reference")
	}
}

// probeConfirm sends POST /payments/confirm with an empty body: an
// operation that exists refuses it for its fields; 404 or 405 says the
// confirm operation is elsewhere. Nothing is confirmed.
func (d *doctor) probeConfirm(ctx context.Context) {
	o := d.send(ctx, http.MethodPost, "/payments/confirm", []byte(`{}`), true, "Idempotency-Key", "doctor-"+newUUID())
	switch {
	case o.err != nil:
		d.rep.cannot("Confirm payment", d.scrub(fmt.Sprintf("POST /payments/confirm got no answer: %v", o.err)))
	case o.status == http.StatusNotFound || o.status == http.StatusMethodNotAllowed:
		d.rep.differ("Confirm payment", fmt.Sprintf("POST /payments/confirm answered HTTP %d: the confirm operation is elsewhere", o.status))
	case o.status < 400:
		d.rep.differ("Confirm payment", fmt.Sprintf("POST /payments/confirm with an empty body answered HTTP %d, not a refusal", o.status))
	default:
		names := fieldNames(o.obj["errors"])
		if slices.Contains(names, "reference") && slices.Contains(names, "quote_id") {
			d.rep.hold("Confirm payment", "POST /payments/confirm exists: an empty body is refused for reference and quote_id")
		} else {
			d.rep.hold("Confirm payment", fmt.Sprintf("POST /payments/confirm exists: an empty body is refused (HTTP %d)", o.status))
		}
	}
}

// cannotAfter marks rows that a refused or failed request left unchecked.
func (d *doctor) cannotAfter(o *observation, rows ...string) {
	why := fmt.Sprintf("%s failed (HTTP %d), so this was not probed", o.what(), o.status)
	if o.err != nil {
		why = fmt.Sprintf("%s got no answer: %v", o.what(), o.err)
	}
	for _, r := range rows {
		d.rep.cannot(r, d.scrub(why))
	}
}

// newUUID makes a random UUID (version 4).
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
