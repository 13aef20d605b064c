package payments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// EventType names a kind of webhook event. Kinds this SDK does not know yet
// still parse, and keep their name.
type EventType string

// The event kinds of the specification.
const (
	EventPaymentInitiated              EventType = "payment.initiated"
	EventPaymentCompleted              EventType = "payment.completed"
	EventPaymentFailed                 EventType = "payment.failed"
	EventPaymentRejected               EventType = "payment.rejected"
	EventVirtualAccountPaymentReceived EventType = "virtual_account.payment_received"
	EventVirtualAccountCreated         EventType = "virtual_account.created"
	EventVirtualAccountUpdated         EventType = "virtual_account.updated"
	EventRecipientCreated              EventType = "recipient.created"
	EventRecipientVerified             EventType = "recipient.verified"
	EventRecipientVerificationFailed   EventType = "recipient.verification_failed"
	EventAccountBalanceLow             EventType = "account.balance_low"
	EventAccountUpdated                EventType = "account.updated"
)

// Errors of webhook event parsing and decoding. Match them with errors.Is.
var (
	// ErrInvalidEvent means a webhook body is not an event: not a JSON
	// object, or without an id or an event kind.
	ErrInvalidEvent = errors.New("payments: webhook body is not an event")

	// ErrWrongEventType is returned by a typed accessor of Event called on
	// an event whose kind carries another resource (Event.Payment on a
	// recipient.created event, say).
	ErrWrongEventType = errors.New("payments: event kind does not carry the requested resource")

	// ErrInvalidEventData means an event's data is missing or does not decode
	// into the requested resource.
	ErrInvalidEventData = errors.New("payments: event data does not decode")
)

// Event is one webhook delivery: {"id", "event", "created_at", "data"}. Get it
// from ConstructEvent (which verifies the signature first), from a handler
// made by webhook.NewHandler, from ParseEvent when you verify elsewhere, or
// from Webhooks.ListEvents: the same value whichever way it came.
//
// Data is kept as raw JSON; the typed accessors (Payment, Recipient,
// VirtualAccount, VirtualAccountPayment) decode it for the event kinds that
// carry those resources, and DecodeData decodes it into any value. An event
// of a kind this SDK does not know still parses: Type keeps its name.
type Event struct {
	// ID is the event's unique id. A delivery that is retried carries the
	// same id, so it is the key to drop duplicates with.
	ID string `json:"id"`
	// Type is the event kind, for example EventPaymentCompleted.
	Type EventType `json:"event"`
	// CreatedAt is when the event occurred; zero when the body has no
	// created_at or one this SDK cannot read as a time.
	CreatedAt time.Time `json:"created_at"`
	// Data is the event's resource as received, or nil when the body has
	// none (or null). It may hold personal data, so the event prints and
	// logs (Format, LogValue) without it; encoding/json and encoding/gob
	// keep it, and an event encoded by encoding/json is a webhook body
	// again: {"id", "event", "created_at", "data"}.
	Data json.RawMessage `json:"data,omitempty"`

	raw json.RawMessage
}

// RawJSON returns the whole event body exactly as received, or nil for an
// event that was not parsed from a body (decoded by encoding/json, say: its
// fields are the event).
func (e *Event) RawJSON() json.RawMessage { return e.raw }

// Format prints the event's id, kind and creation time, for every verb (and
// so in slog's text handler): never its data, which may hold personal data
// (read it with DecodeData or a typed accessor). LogValue logs the same
// three fields. A value receiver, so that an Event printed by value is
// covered too.
func (e Event) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "{ID:%s Type:%s CreatedAt:%s}", redact.String(e.ID, nil), redact.String(string(e.Type), nil),
		e.CreatedAt.Format(time.RFC3339Nano))
}

// eventWire is the body of a delivery. Every member is kept raw so that
// parsing errors can be described without repeating any value.
type eventWire struct {
	ID        looseString     `json:"id"`
	Event     looseString     `json:"event"`
	Type      looseString     `json:"type"`
	CreatedAt looseTime       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// ParseEvent parses a webhook body WITHOUT verifying its signature. Use it
// only when the signature has already been checked (by a gateway, or by your
// own Verifier); otherwise use ConstructEvent. The body must be a JSON object
// with a non-empty "id" and "event" (the name "type" is accepted too); errors
// match ErrInvalidEvent and never repeat the body's content.
func ParseEvent(payload []byte) (*Event, error) {
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrInvalidEvent)
	}
	var w eventWire
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return nil, fmt.Errorf("%w: the body is not valid JSON", ErrInvalidEvent)
	}
	return w.event(append(json.RawMessage(nil), payload...))
}

// event is the Event w was decoded from, raw its body (RawJSON), or
// ErrInvalidEvent when it lacks an id or a kind.
func (w *eventWire) event(raw json.RawMessage) (*Event, error) {
	ev := &Event{
		ID:        strings.TrimSpace(string(w.ID)),
		Type:      EventType(strings.TrimSpace(string(w.Event))),
		CreatedAt: time.Time(w.CreatedAt),
		raw:       raw,
	}
	if ev.Type == "" {
		ev.Type = EventType(strings.TrimSpace(string(w.Type)))
	}
	switch {
	case ev.ID == "":
		return nil, fmt.Errorf("%w: it has no id", ErrInvalidEvent)
	case ev.Type == "":
		return nil, fmt.Errorf("%w: it has no event kind", ErrInvalidEvent)
	}
	if d := bytes.TrimSpace(w.Data); len(d) > 0 && !bytes.Equal(d, []byte("null")) {
		ev.Data = d
	}
	return ev, nil
}

// Payment decodes the data of a payment.* event (payment.initiated,
// payment.completed, payment.failed, payment.rejected, or a payment kind
// added later). A quote in the data is decoded into Payment.Quote; amounts
// may be JSON strings or numbers. RawJSON on the result returns the data.
func (e *Event) Payment() (*Payment, error) {
	if !strings.HasPrefix(string(e.Type), "payment.") {
		return nil, e.wrongType("a payment")
	}
	p := new(Payment)
	if err := e.decodeResource(p, "a payment"); err != nil {
		return nil, err
	}
	return p, nil
}

// Recipient decodes the data of a recipient.* event (recipient.created,
// recipient.verified, recipient.verification_failed, or a recipient kind
// added later). RawJSON on the result returns the data.
func (e *Event) Recipient() (*Recipient, error) {
	if !strings.HasPrefix(string(e.Type), "recipient.") {
		return nil, e.wrongType("a recipient")
	}
	r := new(Recipient)
	if err := e.decodeResource(r, "a recipient"); err != nil {
		return nil, err
	}
	return r, nil
}

// VirtualAccount decodes the data of a virtual_account.* event that carries
// the account itself (virtual_account.created, virtual_account.updated, or a
// kind added later). For virtual_account.payment_received use
// VirtualAccountPayment. RawJSON on the result returns the data.
func (e *Event) VirtualAccount() (*VirtualAccount, error) {
	if !strings.HasPrefix(string(e.Type), "virtual_account.") || e.Type == EventVirtualAccountPaymentReceived {
		return nil, e.wrongType("a virtual account")
	}
	va := new(VirtualAccount)
	if err := e.decodeResource(va, "a virtual account"); err != nil {
		return nil, err
	}
	return va, nil
}

// VirtualAccountPayment decodes the data of a
// virtual_account.payment_received event: money paid into one of your
// virtual accounts. RawJSON on the result returns the data.
func (e *Event) VirtualAccountPayment() (*VirtualAccountPayment, error) {
	if e.Type != EventVirtualAccountPaymentReceived {
		return nil, e.wrongType("a virtual account payment")
	}
	vp := new(VirtualAccountPayment)
	if err := e.decodeResource(vp, "a virtual account payment"); err != nil {
		return nil, err
	}
	return vp, nil
}

// DecodeData decodes the event's data into v with encoding/json, whatever the
// event kind: use it for kinds without a typed accessor (account.balance_low,
// account.updated, kinds added later) or into your own types. It fails with
// ErrInvalidEventData when the event has no data.
func (e *Event) DecodeData(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("%w: event %s (%s) has no data", ErrInvalidEventData, e.ID, e.Type)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return &eventDataError{id: e.ID, typ: e.Type, want: fmt.Sprintf("%T", v), err: err}
	}
	return nil
}

func (e *Event) decodeResource(r resource, want string) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("%w: event %s (%s) has no data", ErrInvalidEventData, e.ID, e.Type)
	}
	if err := unmarshalData(e.Data, r); err != nil {
		return &eventDataError{id: e.ID, typ: e.Type, want: want, err: err}
	}
	r.setResponse(nil, e.Data)
	return nil
}

func (e *Event) wrongType(want string) error {
	return fmt.Errorf("%w: event %s is %q, which does not carry %s", ErrWrongEventType, e.ID, e.Type, want)
}

// eventDataError is data that does not decode. Its message masks long digit
// runs (account numbers, BVNs) that a decoding error may quote; Unwrap gives
// ErrInvalidEventData and the decoding error itself.
type eventDataError struct {
	id   string
	typ  EventType
	want string
	err  error
}

func (e *eventDataError) Error() string {
	return fmt.Sprintf("payments: data of event %s (%s) is not %s: %s", e.id, e.typ, e.want, redact.String(e.err.Error(), nil))
}

func (e *eventDataError) Unwrap() []error { return []error{ErrInvalidEventData, e.err} }

// looseTime decodes an ISO 8601 timestamp in the common shapes (RFC 3339 with
// or without fractional seconds, with or without a zone, "T" or a space) or
// a number of Unix seconds. Anything else decodes to the zero time without an
// error: a timestamp never makes an event unreadable.
type looseTime time.Time

var looseTimeLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

func (t *looseTime) UnmarshalJSON(b []byte) error {
	*t = looseTime(parseLooseTime(b))
	return nil
}

func parseLooseTime(b []byte) time.Time {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return time.Time{}
	}
	if b[0] != '"' {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return time.Time{}
		}
		secs, err := n.Int64()
		if err != nil || secs < 0 || secs > 1<<40 {
			return time.Time{}
		}
		return time.Unix(secs, 0).UTC()
	}
	s, err := unquote(b)
	if err != nil {
		return time.Time{}
	}
	s = strings.TrimSpace(s)
	for _, layout := range looseTimeLayouts {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts
		}
	}
	return time.Time{}
}
