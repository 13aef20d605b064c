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

	"github.com/shopspring/decimal"
)

// The probes that create a recipient and a payment (probeConfirm confirms
// it: doctor_confirm.go).

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
	if !d.check(first, "Status codes", "Status codes") && (first.err != nil || first.status >= 300) {
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
	if reused.err != nil {
		d.rep.cannot("Idempotency", d.scrub("the key with another body: "+reused.noAnswer()))
	} else if d.check(reused, "Error body", "Error body", "Error codes") {
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
		d.rep.cannot("Idempotency", d.scrub("the replay: "+again.noAnswer()))
	case again.status != first.status || !bytes.Equal(again.body, first.body):
		d.rep.differ("Idempotency", fmt.Sprintf("%s sent again with its key: HTTP %d and another body, not the first answer (HTTP %d) replayed", first.what(), again.status, first.status))
	case again.header.Get("Idempotent-Replayed") != "true":
		d.rep.differ("Idempotency", fmt.Sprintf("%s replayed the first answer without Idempotent-Replayed: true", first.what()))
	default:
		d.rep.hold("Idempotency", first.what()+" with its key again: the first answer, Idempotent-Replayed: true")
	}
}

// probeInitiate initiates a payment to the recipient and replays it, and
// returns the payment's data (nil when there is none), which probeConfirm
// confirms.
func (d *doctor) probeInitiate(ctx context.Context, recipientID string) map[string]any {
	if recipientID == "" {
		return nil
	}
	amount := decimal.RequireFromString("100.00")
	body, _ := json.Marshal(map[string]any{
		"amount": json.Number("100.00"), "currency": d.cfg.currency, "recipient_id": recipientID,
		"reference": "doctor-" + newUUID()[:18], "description": "payments doctor probe (sandbox)",
	})
	key := "doctor-" + newUUID()
	o := d.send(ctx, http.MethodPost, "/payments/initiate", body, true, "Idempotency-Key", key)
	if o.err != nil {
		d.cannotAfter(o, "Other request fields", "Quote in the initiate response", "Payment statuses", "Payment fields", "Identifiers", "Confirm payment")
		return nil
	}
	if o.status >= 400 {
		d.check(o, "Error body", "Error body", "Error codes")
		d.rep.differ("Other request fields", d.scrub(fmt.Sprintf("an initiate with the specification's fields only was refused: HTTP %d %v", o.status, o.obj["message"])))
		d.cannotAfter(o, "Quote in the initiate response", "Payment statuses", "Payment fields")
		return nil
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
	return p
}

// probeInvalidInitiate initiates with an empty body: the error envelope,
// a string code, and field errors naming the required fields.
func (d *doctor) probeInvalidInitiate(ctx context.Context) {
	o := d.send(ctx, http.MethodPost, "/payments/initiate", []byte(`{}`), true, "Idempotency-Key", "doctor-"+newUUID())
	if o.err != nil {
		d.cannotAfter(o, "Required initiate fields")
		return
	}
	if o.status < 400 {
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

// cannotAfter marks rows that a refused or failed request left unchecked.
func (d *doctor) cannotAfter(o *observation, rows ...string) {
	why := fmt.Sprintf("%s failed (HTTP %d), so this was not probed", o.what(), o.status)
	if o.err != nil {
		why = o.noAnswer()
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
