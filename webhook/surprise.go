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
	s := payments.Surprise{Kind: payments.SurpriseKind(kind), Detail: surprise.Clean(redact.String(detail, nil))}
	d.found = append(d.found, s)
	if !d.h.surprised.First(kind, s.Detail) || d.h.logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("kind", kind), slog.String("detail", s.Detail)}
	if d.eventID != "" {
		attrs = append(attrs, slog.String("event_id", d.eventID))
	}
	d.h.logger.LogAttrs(d.ctx, slog.LevelWarn, surprise.LogMessage, attrs...)
}

// Its methods do nothing on nil: the delivery of a handler with neither a
// logger nor an observer.

// headers adds the signature headers the handler's verifier does not
// expect: for the SDK's own verifiers (a Verifier of yours knows its
// headers), any header whose name holds "signature" other than
// Payments-Signature and webhook-signature, and a delivery with neither.
func (d *deliverySurprises) headers(header http.Header) {
	if d == nil {
		return
	}
	switch d.h.verifier.(type) {
	case *SignatureVerifier, *StandardVerifier:
	default:
		return
	}
	known := false
	for name := range header {
		switch {
		case strings.EqualFold(name, SignatureHeader), strings.EqualFold(name, StandardSignatureHeader):
			known = true
		case containsFold(name, "signature"):
			d.add(surprise.SignatureHeader, "unknown header "+name)
		}
	}
	if !known {
		d.add(surprise.SignatureHeader, "no "+SignatureHeader+" or "+StandardSignatureHeader+" header")
	}
}

// event adds what a verified event holds that the SDK does not assume.
func (d *deliverySurprises) event(ev *payments.Event) {
	if d == nil {
		return
	}
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
