package payments

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// Response describes the HTTP exchange that produced a resource: the
// envelope's stan and message (quote the stan in support tickets), the HTTP
// status and headers, the idempotency key that was sent, whether the service
// replayed a stored answer, how many attempts the call took, and the body as
// received. Printed or logged it shows the body's size, not the body, and
// its headers, stan and message with credentials and personal data masked
// (the Client's API key wherever the service echoed it); encoding/json and
// encoding/gob keep it whole.
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
	// Replayed is true when the service answered from its idempotency store
	// (header Idempotent-Replayed: true): the answer is the one it gave the
	// first call with IdempotencyKey, and this call did nothing new. A
	// Create or Initiate retried after a lost answer comes back so.
	Replayed bool
	// Body is the response body exactly as received (capped at
	// MaxResponseBytes), the envelope around the data. Do not modify it:
	// the resource's RawJSON is a slice of it.
	Body []byte

	// masks is the Client's that received the response, so that Format and
	// LogValue mask its API key wherever the service echoed it; nil in a
	// Response made or decoded elsewhere.
	masks *masker
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
// status, headers, attempts, idempotency key, replay), and its RawJSON the
// resource exactly as sent, for a field this SDK does not know yet.
//
// It is a function so that encoding/json (every resource embeds it with the
// tag json:"-") and encoding/gob leave it out, and fmt prints it as an
// address: a resource encodes as its fields alone, and a resource decoded by
// encoding/json or gob has no LastResponse or RawJSON (nil). Do not call it:
// use its methods. It is nil in a resource you make yourself.
type APIResource func() (*Response, json.RawMessage)

// LastResponse returns the metadata of the HTTP response that carried this
// resource, or nil when the resource did not come from an API call (for
// example when it was decoded from a webhook event, or by encoding/json).
func (r *APIResource) LastResponse() *Response {
	if r == nil || *r == nil {
		return nil
	}
	resp, _ := (*r)()
	return resp
}

// RawJSON returns the resource's JSON exactly as the service sent it,
// including any field this version of the SDK does not know about, or nil
// for a resource that did not come from the service.
func (r *APIResource) RawJSON() json.RawMessage {
	if r == nil || *r == nil {
		return nil
	}
	resp, raw := (*r)()
	if raw == nil && resp != nil {
		return dataOf(resp.Body)
	}
	return raw
}

// setResponse records where the resource came from: resp, whose body holds
// its JSON, or raw, its JSON (a webhook event's data).
func (r *APIResource) setResponse(resp *Response, raw json.RawMessage) {
	*r = func() (*Response, json.RawMessage) { return resp, raw }
}

// idempotentReplay reports whether a response's headers say that the service
// answered from its idempotency store.
func idempotentReplay(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("Idempotent-Replayed")), "true")
}

// resource is implemented by every type the pipeline decodes from data.
type resource interface {
	setResponse(resp *Response, raw json.RawMessage)
}

// wired is a resource whose JSON differs from its fields (Payment and its
// quote): decoder returns the value its JSON decodes into, in the envelope's
// own pass, made in the call's scratch s, and that value's finish completes
// the resource.
type wired interface {
	decoder(s *decodeScratch) finisher
}

// finisher completes a resource after decoding, and returns what makes it
// unusable ("" when nothing). whole asks for its optional parts too (the
// quote of an initiated payment).
type finisher interface{ finish(whole bool) string }
