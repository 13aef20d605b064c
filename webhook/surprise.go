package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/surprise"
)

// What a delivery holds that the SDK does not assume (docs/assumptions.md,
// "Webhook body" and "Webhook signature") is a surprise: it never changes
// the answer. A handler logs each kind and detail once (WithLogger), and
// reports every one to its DeliveryObserver (DeliveryResult.Surprises),
// which paymentsotel counts. Once per Handler, not per process: a program
// has no global state of the SDK's, and two handlers may face two senders.

// deliverySurprises collects one delivery's surprises and logs the new
// ones.
type deliverySurprises struct {
	h       *Handler
	ctx     context.Context
	eventID string // once known
	found   []payments.Surprise
}

func (d *deliverySurprises) add(kind, detail string) {
	d.note(kind, detail, true)
}

// note adds a surprise and, when remember is true, reports whether it was
// met for the first time (then logged).
func (d *deliverySurprises) note(kind, detail string, remember bool) bool {
	s := payments.Surprise{Kind: payments.SurpriseKind(kind), Detail: surprise.Clean(redact.String(detail, nil))}
	d.found = append(d.found, s)
	if !remember || !d.h.surprised.First(kind, s.Detail) {
		return false
	}
	if d.h.logger == nil {
		return true
	}
	attrs := []slog.Attr{slog.String("kind", kind), slog.String("detail", s.Detail)}
	if d.eventID != "" {
		attrs = append(attrs, slog.String("event_id", d.eventID))
	}
	d.h.logger.LogAttrs(d.ctx, slog.LevelWarn, surprise.LogMessage, attrs...)
	return true
}

// Headers are not signed: a replay of a signed delivery, within the
// verifier's tolerance, could carry any number of made-up ones. So one
// delivery reports at most maxHeaderSurprises unknown signature headers,
// and a handler remembers (and logs) at most maxRememberedHeaders of them,
// which leaves most of the surprises it remembers to the signed body's.
const (
	maxHeaderSurprises   = 4
	maxRememberedHeaders = 16
)

// headers adds the signature headers the handler's verifier does not
// expect: for the SDK's own verifiers (a Verifier of yours knows its
// headers), any header whose name holds "signature" other than
// Payments-Signature and webhook-signature. It is called once the delivery
// verified: an unsigned request changes nothing the handler remembers.
func (d *deliverySurprises) headers(header http.Header) {
	switch d.h.verifier.(type) {
	case *SignatureVerifier, *StandardVerifier:
	default:
		return
	}
	n := 0
	for name := range header {
		if n == maxHeaderSurprises {
			return
		}
		if !containsFold(name, "signature") || strings.EqualFold(name, SignatureHeader) || strings.EqualFold(name, StandardSignatureHeader) {
			continue
		}
		n++
		remember := d.h.headerSurprises.Load() < maxRememberedHeaders
		if d.note(surprise.SignatureHeader, "unknown header "+name, remember) {
			d.h.headerSurprises.Add(1)
		}
	}
}

// event adds what a verified event holds that the SDK does not assume.
func (d *deliverySurprises) event(ev *payments.Event) {
	d.eventID = ev.ID
	surprise.Event(ev.RawJSON(), ev.Data, string(ev.Type), "event.", d.add)
}

// report hands the delivery's surprises to its result, for the observer.
func (d *deliverySurprises) report(res *DeliveryResult) {
	if res != nil {
		res.Surprises = d.found
	}
}

// containsFold reports whether s contains the lower-case ASCII word w, in
// any case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
