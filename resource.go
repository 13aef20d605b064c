package payments

import (
	"encoding/json"
	"net/http"
)

// Response describes the HTTP exchange that produced a resource: the
// envelope's stan and message (quote the stan in support tickets), the HTTP
// status and headers, the idempotency key that was sent, how many attempts
// the call took, and the raw JSON of the envelope's data member.
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
	// RawData is the envelope's data member exactly as received.
	RawData json.RawMessage
}

// apiResource is embedded in every resource the service returns. It keeps the
// response metadata and the raw JSON of the resource without exposing them as
// JSON fields.
type apiResource struct {
	resp *Response
	raw  json.RawMessage
}

// LastResponse returns the metadata of the HTTP response that carried this
// resource, or nil when the resource did not come from an API call (for
// example when it was decoded from a webhook event).
func (r *apiResource) LastResponse() *Response { return r.resp }

// RawJSON returns the resource's JSON exactly as the service sent it,
// including any field this version of the SDK does not know about.
func (r *apiResource) RawJSON() json.RawMessage { return r.raw }

func (r *apiResource) setResponse(resp *Response, raw json.RawMessage) {
	r.resp = resp
	r.raw = raw
}

// resource is implemented by every type the pipeline decodes from data.
type resource interface {
	setResponse(resp *Response, raw json.RawMessage)
}
