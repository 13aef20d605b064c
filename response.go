package payments

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Response describes the HTTP exchange that produced a resource: the
// envelope's stan and message (quote the stan in support tickets), the HTTP
// status and headers, the idempotency key that was sent, how many attempts
// the call took, and the body as received.
type Response struct {
	// StatusCode is the HTTP status of the final attempt.
	StatusCode int
	// Header holds the response headers of the final attempt.
	Header http.Header
	// Stan is the service's identifier of this operation.
	Stan string
	// Message is the envelope's human-readable message.
	Message string
	// IdempotencyKey is the Idempotency-Key header that was sent, or "" when
	// the call carried none.
	IdempotencyKey string
	// Attempts is the number of HTTP attempts the call made (1 when the first
	// one succeeded).
	Attempts int
	// Body is the response body exactly as received (capped at
	// MaxResponseBytes), the envelope around the data. Do not modify it:
	// the resource's RawJSON is a slice of it.
	Body []byte
}

// dataOf is the data member of an envelope, a slice of body: encoding/json
// finds it by the rules the decoder used (the last "data" member, its name
// in any case). nil when there is none, or it is null.
func dataOf(body []byte) json.RawMessage {
	var env struct {
		Data dataView `json:"data"`
	}
	if json.Unmarshal(body, &env) != nil || bytes.Equal(env.Data, []byte("null")) {
		return nil
	}
	return json.RawMessage(env.Data)
}

// APIResource is embedded in every resource the service returns (Recipient,
// Payment, VirtualAccount, VirtualAccountPayment, TriggerResult, EventPage):
// its LastResponse gives the HTTP response that carried the resource (stan,
// status, headers, attempts, idempotency key), and its RawJSON the resource
// exactly as sent, for a field this SDK does not know yet. It has no exported
// fields: printed with the resource (fmt, any verb; slog's text handler) it
// shows one address, and encoding/json (slog's JSON handler) leaves it out.
type APIResource struct {
	// src is a pointer to a pointer so that fmt prints an address for every
	// verb: a pointer to a struct printed with a verb it does not take (%s,
	// %q) shows the struct's fields, which hold the body in clear.
	src **source
}

// source is where a resource came from: the response whose body holds its
// JSON, or its JSON (a webhook event's data).
type source struct {
	resp *Response
	raw  json.RawMessage
}

// sourceCell lets setResponse make src with one allocation.
type sourceCell struct {
	ptr *source
	src source
}

// LastResponse returns the metadata of the HTTP response that carried this
// resource, or nil when the resource did not come from an API call (for
// example when it was decoded from a webhook event).
func (r *APIResource) LastResponse() *Response {
	if r.src == nil {
		return nil
	}
	return (*r.src).resp
}

// RawJSON returns the resource's JSON exactly as the service sent it,
// including any field this version of the SDK does not know about.
func (r *APIResource) RawJSON() json.RawMessage {
	if r.src == nil {
		return nil
	}
	s := *r.src
	if s.raw == nil && s.resp != nil {
		return dataOf(s.resp.Body)
	}
	return s.raw
}

// setResponse records where the resource came from: resp, whose body holds
// its JSON, or raw, its JSON (a webhook event's data).
func (r *APIResource) setResponse(resp *Response, raw json.RawMessage) {
	c := &sourceCell{src: source{resp: resp, raw: raw}}
	c.ptr = &c.src
	r.src = &c.ptr
}

// resource is implemented by every type the pipeline decodes from data.
type resource interface {
	setResponse(resp *Response, raw json.RawMessage)
}

// wired is a resource whose JSON differs from its fields (Payment and its
// quote): decoder returns the value its JSON decodes into, in the envelope's
// own pass, and that value's finish completes the resource.
type wired interface {
	decoder() finisher
}

// finisher completes a resource after decoding, and returns what makes it
// unusable ("" when nothing). whole asks for its optional parts too (the
// quote of an initiated payment).
type finisher interface{ finish(whole bool) string }
