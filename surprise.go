package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/request"
	"github.com/paymentsapi/payments-go/internal/surprise"
)

// SurpriseKind names a way in which the service answered what the SDK does
// not assume (docs/assumptions.md). The kinds are few and fixed: fit for a
// metric attribute.
type SurpriseKind string

// The kinds of surprise. The client meets the first four, event kinds in
// listed events and rate-limit headers; the webhook receiver
// (webhook.Handler) event kinds, signature headers, and unknown fields
// and payment statuses in deliveries.
const (
	// SurpriseUnknownField: a member of a response's data (or of its
	// quote, or of an event) that the SDK does not read. Detail is where
	// it stands, such as "data.completed_at": its value is never reported.
	SurpriseUnknownField SurpriseKind = surprise.UnknownField
	// SurprisePaymentStatus: a payment status outside pending, completed,
	// failed and rejected. Detail is the status.
	SurprisePaymentStatus SurpriseKind = surprise.PaymentStatus
	// SurpriseErrorBody: an error answer whose body is not the assumed
	// envelope (success false, message, a string code, errors as a list of
	// {field, message} or a map). Detail says how it differs.
	SurpriseErrorBody SurpriseKind = surprise.ErrorBody
	// SurpriseSuccessStatus: a success status other than the one assumed
	// for the operation (201 for recipients.create, 200 for the others).
	// Detail names both.
	SurpriseSuccessStatus SurpriseKind = surprise.SuccessStatus
	// SurpriseEventKind: an event kind the specification does not list.
	// Detail is the kind.
	SurpriseEventKind SurpriseKind = surprise.EventKind
	// SurpriseSignatureHeader: a delivery with a signature-like header the
	// SDK does not know (Detail names it), or with neither of the known
	// ones.
	SurpriseSignatureHeader SurpriseKind = surprise.SignatureHeader
	// SurpriseRateLimitHeader: a 429 without Retry-After that says how long
	// to wait in another header: RateLimit-Reset, RateLimit (its t=),
	// X-RateLimit-Reset or X-RateLimit-Retry-After. Detail names the header
	// and whether the SDK read it (docs/retries.md); a header it does not
	// read leaves the wait to its own back-off.
	SurpriseRateLimitHeader SurpriseKind = surprise.RateLimitHeader
)

// Surprise is one thing the service did that the SDK does not assume. The
// SDK never fails a call for it: it reports it, so that a wrong assumption
// is learnt from the logs before it costs anything. Detail never holds a
// secret, personal data or the value of an unknown field (a field's name,
// a status, an HTTP status, a header's name); it is at most 80 printable
// characters.
type Surprise struct {
	Kind   SurpriseKind
	Detail string
}

// surprises collects what one call met.
type surprises []Surprise

// add is the one way a Surprise is made: its detail cleaned as Surprise
// says.
func (s *surprises) add(kind, detail string) {
	*s = append(*s, Surprise{Kind: SurpriseKind(kind), Detail: surprise.Clean(redact.String(detail, nil))})
}

// report logs each surprise the Client meets for the first time (per kind
// and detail, at most surprise.MaxRemembered of them), at warning level: to
// WithLogger's logger, else to slog.Default() as it is at that moment. Only
// a call that met a surprise gets here: the others pay nothing for it.
func (c *Client) report(ctx context.Context, op string, found surprises) {
	for _, s := range found {
		if !c.surprised.First(string(s.Kind), s.Detail) {
			continue
		}
		l := c.logger
		if l == nil {
			l = slog.Default()
		}
		l.LogAttrs(ctx, slog.LevelWarn, surprise.LogMessage,
			slog.String("kind", string(s.Kind)), slog.String("detail", s.Detail), slog.String("operation", op))
	}
}

// fieldsOf lists the JSON names of t's fields (its embedded structs'
// included), with extra names.
func fieldsOf(t reflect.Type, extra ...string) surprise.Fields {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return surprise.NewFields(append(names, extra...)...)
}

// The members the SDK reads, by resource (docs/assumptions.md). A payment
// also has its flat quote's, and recipient_id, the recipient it pays.
var (
	paymentFields        = fieldsOf(reflect.TypeFor[paymentWire](), "recipient_id")
	quoteFields          = fieldsOf(reflect.TypeFor[quoteWire]())
	recipientFields      = fieldsOf(reflect.TypeFor[Recipient]())
	virtualAccountFields = fieldsOf(reflect.TypeFor[VirtualAccount]())
	eventPageFields      = surprise.NewFields("events", "has_more")
)

// dataSurprises adds what the data of a decoded success holds that the SDK
// does not assume: unknown members, an unknown payment status, unknown
// event kinds and members in a page.
//
// walked says that fastEnvelope read the body: it takes none with a member
// this walk would report (fastdecode.go), so the walk is not made again.
func dataSurprises(found *surprises, body []byte, out any, walked bool) {
	var known surprise.Fields
	quote := false // walk data.quote too
	switch o := out.(type) {
	case *Payment:
		known, quote = paymentFields, true
		if o.Status != "" && !surprise.KnownPaymentStatus(string(o.Status)) {
			found.add(surprise.PaymentStatus, string(o.Status))
		}
	case *Recipient:
		known = recipientFields
	case *VirtualAccount:
		known = virtualAccountFields
	case *eventPageWire:
		known = eventPageFields
		for i, ev := range o.parsed {
			if o.others != nil && o.others[i] {
				surprise.Event(ev.raw, ev.Data, string(ev.Type), "data.events[].", found.add)
			} else { // its members are id, event, created_at and data
				surprise.EventData(ev.Data, string(ev.Type), found.add)
			}
		}
	default:
		return
	}
	if walked {
		return
	}
	// One pass over the body: the envelope's members, data's, and its
	// quote's, each value skipped once. As encoding/json reads it, the
	// last data member (its name in any case) is the data: a later one
	// takes back what an earlier one added.
	mark := len(*found)
	surprise.Object(body, skipSpaceAt(body), func(name []byte, at int) int {
		if !bytes.EqualFold(name, []byte("data")) {
			return surprise.Skip(body, at)
		}
		*found = (*found)[:mark]
		if body[at] != '{' {
			return surprise.Skip(body, at)
		}
		return surprise.Object(body, at, func(name []byte, at int) int {
			switch {
			case !known.Has(name):
				found.add(surprise.UnknownField, "data."+string(name))
			case quote && string(name) == "quote" && body[at] == '{':
				return surprise.Object(body, at, func(name []byte, at int) int {
					if !quoteFields.Has(name) {
						found.add(surprise.UnknownField, "data.quote."+string(name))
					}
					return surprise.Skip(body, at)
				})
			}
			return surprise.Skip(body, at)
		})
	})
}

// skipSpaceAt is the index of the first byte of b that is not JSON space.
func skipSpaceAt(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// waitHeader adds the surprise of a call whose 429 said how long to wait in
// another header than Retry-After (request.Call.WaitHeader, not "").
func waitHeader(found *surprises, st *request.Call) {
	how := " (not read)"
	if st.WaitHeaderRead {
		how = " (read as seconds)"
	}
	found.add(surprise.RateLimitHeader, "a 429's wait in "+st.WaitHeader+", no Retry-After"+how)
}

// successStatus adds a surprise when a success's status is not the one op
// assumes (op.status; 0 assumes none).
func successStatus(found *surprises, op *operation, status int) {
	if op.status != 0 && status != op.status {
		found.add(surprise.SuccessStatus, op.Name+" answered "+strconv.Itoa(status)+", assumed "+strconv.Itoa(op.status))
	}
}

// errorBodySurprises adds how an error answer's body differs from the
// assumed envelope: parsed tells whether it decoded as JSON into env.
func errorBodySurprises(found *surprises, raw []byte, env *envelope, parsed bool, h http.Header) {
	switch {
	case len(bytes.TrimSpace(raw)) == 0:
		found.add(surprise.ErrorBody, "the body is empty")
		return
	case !parsed:
		ct := h.Get("Content-Type")
		if ct == "" {
			ct = "no Content-Type"
		}
		found.add(surprise.ErrorBody, "the body is not JSON ("+ct+")")
		return
	}
	if env.Success == nil || *env.Success {
		found.add(surprise.ErrorBody, "no success:false")
	}
	if env.Message == "" {
		if len(env.Error) > 0 {
			found.add(surprise.ErrorBody, "no message, an error member instead")
		} else {
			found.add(surprise.ErrorBody, "no message")
		}
	}
	if code := bytes.TrimSpace(env.Code); len(code) > 0 && code[0] != '"' && !bytes.Equal(code, []byte("null")) {
		if _, err := strconv.ParseFloat(string(code), 64); err == nil {
			found.add(surprise.ErrorBody, "code is a number")
		} else {
			found.add(surprise.ErrorBody, "code is not a string")
		}
	}
	if errs := bytes.TrimSpace(env.Errors); len(errs) > 0 && !bytes.Equal(errs, []byte("null")) {
		var list []map[string]json.RawMessage
		var byField map[string]json.RawMessage
		switch {
		case json.Unmarshal(errs, &list) == nil:
		case json.Unmarshal(errs, &byField) == nil:
			// fieldErrors reads a member whose value is a message or a
			// list of messages; any other member is dropped.
			for _, v := range byField {
				var ms []string
				if jsonScalar(v) == "" && json.Unmarshal(v, &ms) != nil {
					found.add(surprise.ErrorBody, "errors has a member the SDK does not read (dropped)")
					break
				}
			}
		default:
			var messages []string
			if json.Unmarshal(errs, &messages) == nil {
				found.add(surprise.ErrorBody, "errors is a list of strings (read without field names)")
			} else {
				found.add(surprise.ErrorBody, "errors has a shape the SDK does not read (dropped)")
			}
		}
	}
}
