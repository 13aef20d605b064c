package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// finalStatuses are the statuses the SDK takes as a payment's end.
var finalStatuses = []payments.PaymentStatus{payments.PaymentStatusCompleted, payments.PaymentStatusFailed, payments.PaymentStatusRejected}

// probeConfirm confirms the probe payment (pay, from probeInitiate), the
// one payment doctor makes, against a sandbox the merchant named only, and
// returns its id ("" when nothing was confirmed). Without a payment to
// confirm, it sends an empty body instead, which an operation that exists
// refuses for its fields.
func (d *doctor) probeConfirm(ctx context.Context, pay map[string]any) (id string, status payments.PaymentStatus) {
	ref, _ := pay["reference"].(string)
	quoteID := quoteIDOf(pay)
	if ref == "" || quoteID == "" {
		d.probeEmptyConfirm(ctx)
		return "", ""
	}
	body, _ := json.Marshal(map[string]string{"reference": ref, "quote_id": quoteID})
	o := d.send(ctx, http.MethodPost, "/payments/confirm", body, true, "Idempotency-Key", "doctor-"+newUUID())
	switch {
	case o.err != nil:
		d.cannotAfter(o, "Confirm payment", "Payment statuses")
		return "", ""
	case o.status == http.StatusNotFound || o.status == http.StatusMethodNotAllowed:
		d.rep.differ("Confirm payment", fmt.Sprintf("POST /payments/confirm answered HTTP %d: the confirm operation is elsewhere", o.status))
		return "", ""
	case o.status >= 400:
		d.check(o, "Error body", "Error body", "Error codes")
		code, _ := o.obj["code"].(string)
		d.rep.hold("Confirm payment", fmt.Sprintf("POST /payments/confirm exists: it refused the probe payment (HTTP %d, code %s)", o.status, show(code)))
		d.rep.note("Payment statuses", d.scrub(fmt.Sprintf("the confirm of the probe payment was refused (HTTP %d, code %s: %v), so its final status was not followed; "+
			"a refusal such as insufficient_balance needs the sandbox funded", o.status, show(code), o.obj["message"])))
		return "", ""
	}
	data := o.data()
	id, _ = data["id"].(string)
	s, _ := data["status"].(string)
	d.rep.hold("Confirm payment", "POST /payments/confirm with {reference, quote_id} confirmed the probe payment: status "+show(s))
	d.check(o, "Confirm payment", "Confirm payment", "Payment statuses", "Payment fields", "Status codes")
	return id, payments.PaymentStatus(s)
}

// probeEmptyConfirm sends POST /payments/confirm with an empty body: an
// operation that exists refuses it for its fields; 404 or 405 says the
// confirm operation is elsewhere. Nothing is confirmed.
func (d *doctor) probeEmptyConfirm(ctx context.Context) {
	o := d.send(ctx, http.MethodPost, "/payments/confirm", []byte(`{}`), true, "Idempotency-Key", "doctor-"+newUUID())
	switch {
	case o.err != nil:
		d.cannotAfter(o, "Confirm payment")
	case o.status == http.StatusNotFound || o.status == http.StatusMethodNotAllowed:
		d.rep.differ("Confirm payment", fmt.Sprintf("POST /payments/confirm answered HTTP %d: the confirm operation is elsewhere", o.status))
	case o.status < 400:
		d.rep.differ("Confirm payment", fmt.Sprintf("POST /payments/confirm with an empty body answered HTTP %d, not a refusal", o.status))
	default:
		names := fieldNames(o.obj["errors"])
		if slices.Contains(names, "reference") && slices.Contains(names, "quote_id") {
			d.rep.hold("Confirm payment", "POST /payments/confirm exists: an empty body is refused for reference and quote_id (no payment to confirm)")
		} else {
			d.rep.hold("Confirm payment", fmt.Sprintf("POST /payments/confirm exists: an empty body is refused (HTTP %d; no payment to confirm)", o.status))
		}
	}
}

// quoteIDOf is the quote id of an initiated payment: data.quote.quote_id
// as assumed, or quote_id flat in data.
func quoteIDOf(pay map[string]any) string {
	if q, ok := pay["quote"].(map[string]any); ok {
		id, _ := q["quote_id"].(string)
		return id
	}
	id, _ := pay["quote_id"].(string)
	return id
}

// followPayment follows the confirmed payment to its final status: the
// payment.completed, payment.failed or payment.rejected event for it, as
// delivered to doctor or as listed, within --wait. A status the SDK does
// not know, in the confirm's answer (probeConfirm's check) or in an event
// of the payment, differs: code that waits for a final status would wait
// for ever, and code that takes any status but pending as final books it.
func (d *doctor) followPayment(ctx context.Context, id string, status payments.PaymentStatus) {
	if id == "" {
		return
	}
	wait := time.NewTimer(d.cfg.wait)
	defer wait.Stop()
	for d.stopped == "" {
		for _, ev := range d.paymentEvents(ctx, id) {
			s, _ := ev.Data["status"].(string)
			switch {
			case !slices.Contains(knownStatuses, payments.PaymentStatus(s)):
				d.rep.differ("Payment statuses", fmt.Sprintf("the confirmed payment's %s event carries status %s, which the SDK does not know: "+
					"code that waits for completed, failed or rejected would wait for ever", show(ev.Event), show(s)))
				return
			case slices.Contains(finalStatuses, payments.PaymentStatus(strings.TrimPrefix(ev.Event, "payment."))):
				d.rep.note("Payment statuses", fmt.Sprintf("the confirmed payment answered %s, then %s came for it (status %s)", show(string(status)), show(ev.Event), show(s)))
				return
			}
		}
		select {
		case <-wait.C:
			d.rep.note("Payment statuses", fmt.Sprintf("the confirmed payment answered %s; no payment.completed, payment.failed or payment.rejected event came for it within --wait %s",
				show(string(status)), d.cfg.wait))
			return
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// paymentEvent is the part of an event followPayment reads.
type paymentEvent struct {
	Event string         `json:"event"`
	Data  map[string]any `json:"data"`
}

// paymentEvents are the payment events of payment id among the deliveries
// to doctor and in the list of events since doctor began.
func (d *doctor) paymentEvents(ctx context.Context, id string) []paymentEvent {
	var out []paymentEvent
	add := func(raw []byte) {
		var ev paymentEvent
		if json.Unmarshal(raw, &ev) == nil && ev.Data["id"] == id && strings.HasPrefix(ev.Event, "payment.") {
			out = append(out, ev)
		}
	}
	if d.recv != nil {
		for _, g := range d.recv.deliveries() {
			add(g.body)
		}
	}
	q := url.Values{"since": {d.start.UTC().Format(time.RFC3339)}, "limit": {"100"}}
	for page := 0; page < 10; page++ {
		o := d.send(ctx, http.MethodGet, "/webhooks/events?"+q.Encode(), nil, true)
		if o.err != nil || o.status != http.StatusOK {
			break
		}
		evs, _ := o.data()["events"].([]any)
		last := ""
		for _, e := range evs {
			raw, _ := json.Marshal(e)
			add(raw)
			m, _ := e.(map[string]any)
			last, _ = m["id"].(string)
		}
		if more, _ := o.data()["has_more"].(bool); !more || last == "" {
			break
		}
		q.Del("since")
		q.Set("after", last)
	}
	return out
}
