package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// The members of a payment the SDK expects: the specification's fields,
// recipient_id and the quote.
var paymentFields = []string{
	"id", "reference", "status", "amount", "currency", "description", "type", "sub_type", "category",
	"transaction_date", "tags", "is_reversed", "is_completed", "channel", "notes", "created_at", "updated_at",
	"recipient_id", "quote",
}

var (
	quoteFields   = []string{"quote_id", "amount", "fee", "exchange_rate", "total_amount", "currency", "created_at", "expires_at"}
	quoteMoney    = []string{"amount", "fee", "exchange_rate", "total_amount"}
	knownStatuses = []payments.PaymentStatus{
		payments.PaymentStatusPending, payments.PaymentStatusCompleted, payments.PaymentStatusFailed, payments.PaymentStatusRejected,
	}
)

// checkPayment checks a payment: its status, its members, and its quote
// (nested in data.quote, as assumed).
func checkPayment(p map[string]any) []error {
	if p == nil {
		return []error{differ("Payment fields", "data is not a payment object")}
	}
	var errs []error
	if s, ok := p["status"].(string); !ok || !slices.Contains(knownStatuses, payments.PaymentStatus(s)) {
		errs = append(errs, differ("Payment statuses", "status %v is none of pending, completed, failed, rejected", show(fmt.Sprint(p["status"]))))
	}
	if extra := unknownKeys(p, append(slices.Clone(paymentFields), quoteFields...)); len(extra) > 0 {
		errs = append(errs, differ("Payment fields", "members the SDK does not know: %s", strings.Join(extra, ", ")))
	}
	if a, ok := p["amount"]; ok && !isKind(a, "string") {
		errs = append(errs, differ("Payment fields", "amount is a %s (%v), not a string", kindOf(a), a))
	}
	return append(errs, checkQuote(p)...)
}

// checkQuote checks where the quote is and what it holds.
func checkQuote(p map[string]any) []error {
	const row = "Quote in the initiate response"
	q, nested := p["quote"].(map[string]any)
	if !nested {
		if _, flat := p["quote_id"]; flat {
			return []error{differ(row, "no data.quote: the quote's fields are flat in data (the SDK reads them there too)")}
		}
		return []error{differ(row, "no data.quote and no quote_id in data")}
	}
	var errs []error
	if extra := unknownKeys(q, quoteFields); len(extra) > 0 {
		errs = append(errs, differ(row, "data.quote has members the SDK does not know: %s", strings.Join(extra, ", ")))
	}
	var missing []string
	for _, k := range []string{"quote_id", "amount", "fee", "exchange_rate", "total_amount", "currency"} {
		if _, ok := q[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, differ(row, "data.quote lacks %s", strings.Join(missing, ", ")))
	}
	for _, k := range quoteMoney {
		if v, ok := q[k]; ok && !isDecimalString(v) {
			errs = append(errs, differ(row, "data.quote.%s is a %s (%v), not a decimal string", k, kindOf(v), v))
		}
	}
	if id, ok := q["quote_id"]; ok && (!isKind(id, "string") || id == "") {
		errs = append(errs, differ("Identifiers", "quote_id is %s %v, not a non-empty string", kindOf(id), id))
	}
	return errs
}

func isDecimalString(v any) bool {
	s, ok := v.(string)
	_, err := decimal.NewFromString(s)
	return ok && err == nil
}

// unknownKeys returns the keys of o that known lacks, sorted.
func unknownKeys(o map[string]any, known []string) []string {
	var out []string
	for k := range o {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// checkEventPage checks a page of the list of events.
func checkEventPage(d map[string]any) []error {
	const row = "List events"
	if d == nil {
		return []error{differ(row, "data is not an object")}
	}
	var errs []error
	if _, ok := d["events"].([]any); !ok {
		errs = append(errs, differ(row, "data.events is %s, not a list", kindOf(d["events"])))
	}
	if !isKind(d["has_more"], "boolean") {
		seen := "data has no boolean has_more"
		if extra := unknownKeys(d, []string{"events", "has_more"}); len(extra) > 0 {
			seen += " (it has " + strings.Join(extra, ", ") + ")"
		}
		errs = append(errs, differ(row, "%s: the SDK would read the first page as the last", seen))
	}
	return errs
}

// CheckWebhook checks a delivery: its body and its signature header's
// presence and form (doctor verifies the signature itself, with the
// secret).
func (assumedContract) CheckWebhook(header http.Header, body []byte) error {
	errs := checkEventBody(decodeLoose(body))
	sig := header.Get("Payments-Signature")
	switch {
	case sig == "" && header.Get("Webhook-Signature") != "":
		errs = append(errs, differ("Webhook signature", "no Payments-Signature; Standard Webhooks headers instead (webhook-id, webhook-signature)"))
	case sig == "":
		errs = append(errs, differ("Webhook signature", "no Payments-Signature header; the delivery's headers: %s", headerNames(header)))
	case !strings.Contains(sig, "t=") || !strings.Contains(sig, "v1="):
		errs = append(errs, differ("Webhook signature", "Payments-Signature is not t=<unix>,v1=<hex>: %.40q", sig))
	}
	return errors.Join(errs...)
}

// checkEventBody checks a webhook body, and the payment it carries.
func checkEventBody(ev map[string]any) []error {
	const row = "Webhook body"
	if ev == nil {
		return []error{differ(row, "the body is not a JSON object")}
	}
	var errs []error
	if !isUUID(ev["id"]) {
		errs = append(errs, differ(row, "id is %s, not a UUID", kindOf(ev["id"])))
	}
	if !isKind(ev["event"], "string") {
		errs = append(errs, differ(row, "event is %s, not a string", kindOf(ev["event"])))
	}
	if s, _ := ev["created_at"].(string); !isTime(s) {
		errs = append(errs, differ(row, "created_at is %s, not an RFC 3339 time", kindOf(ev["created_at"])))
	}
	data, ok := ev["data"].(map[string]any)
	if !ok {
		return append(errs, differ(row, "data is %s, not an object", kindOf(ev["data"])))
	}
	if extra := unknownKeys(ev, []string{"id", "event", "created_at", "data"}); len(extra) > 0 {
		errs = append(errs, differ(row, "members the SDK does not know: %s", strings.Join(extra, ", ")))
	}
	if t, _ := ev["event"].(string); strings.HasPrefix(t, "payment.") {
		for _, e := range checkPayment(data) {
			if d, ok := e.(*differsFrom); ok && (d.topic == "Payment statuses" || d.topic == "Payment fields") {
				errs = append(errs, differ(d.topic, "%s event: %s", t, d.seen))
			}
		}
	}
	return errs
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// headerNames lists a header's names, sorted, without values.
func headerNames(h http.Header) string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
