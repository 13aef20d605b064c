package payments

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// apiError builds the error for a non-2xx answer, whatever its body: the
// envelope, another JSON shape, an HTML page, text, or nothing. readErr is
// why the body could not be read in full (the context's deadline, a dropped
// connection), or nil.
func (c *Client) apiError(r *Response, raw []byte, readErr error) error {
	if readErr == errBodyTooLarge {
		readErr = nil // documented: the body is cut at the cap
	}
	var env envelope
	switch {
	case len(bytes.TrimSpace(raw)) == 0 && readErr == nil:
		env = envelope{Message: "the body is empty"}
	case json.Unmarshal(raw, &env) == nil:
		r.Stan, r.Message = c.scrub(env.Stan), c.scrub(env.Message)
	case readErr != nil:
		// The status came but the body stopped: say so rather than blame
		// the body's format, and keep the cause for errors.Is.
		env = envelope{Message: "reading the body failed: " + readErr.Error()}
	default:
		// Say what came instead of the envelope (an HTML page from a proxy,
		// text): the body itself stays in APIError.Body.
		env = envelope{Message: notEnvelopeReason(r.Header)}
	}
	e := c.apiErrorFrom(r, raw, &env)
	e.Err = readErr
	return e
}

func (c *Client) apiErrorFrom(r *Response, raw []byte, env *envelope) *APIError {
	e := &APIError{
		StatusCode:     r.StatusCode,
		Stan:           env.Stan,
		Code:           jsonScalar(env.Code),
		Errors:         fieldErrors(env.Errors),
		Header:         r.Header,
		IdempotencyKey: r.IdempotencyKey,
		Attempts:       r.Attempts,
	}
	msg := env.Message
	if msg == "" {
		msg = errorMember(env.Error, &e.Code)
	}
	// Everything the service wrote that reaches Error() is scrubbed, and
	// made printable on one line.
	e.Stan = redact.Secrets(e.Stan, c.key.raw)
	keep := []string{e.Stan}
	e.Message = redact.String(msg, keep, c.key.raw)
	e.Code = redact.Secrets(e.Code, c.key.raw)
	for i := range e.Errors {
		e.Errors[i].Field = redact.Secrets(e.Errors[i].Field, c.key.raw)
		e.Errors[i].Message = redact.String(e.Errors[i].Message, keep, c.key.raw)
	}
	if len(raw) > maxErrorBodyBytes {
		raw = raw[:maxErrorBodyBytes]
	}
	e.Body = append([]byte(nil), raw...)
	return e
}

// jsonScalar renders a JSON string or number as text ("" for anything else).
func jsonScalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// errorMember reads an "error" member given as a string or as an object with
// message and code, a shape many gateways use.
func errorMember(raw json.RawMessage, code *string) string {
	if s := jsonScalar(raw); s != "" {
		return s
	}
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	if *code == "" {
		*code = jsonScalar(obj.Code)
	}
	return obj.Message
}

// fieldErrors reads the envelope's errors member in the shapes services use:
// [{"field","message"}], {"field": "message"}, {"field": ["message", ...]}, or
// a list of messages.
func fieldErrors(raw json.RawMessage) []FieldError {
	if len(raw) == 0 {
		return nil
	}
	var list []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
		Msg     string `json:"msg"`
	}
	if json.Unmarshal(raw, &list) == nil {
		out := make([]FieldError, 0, len(list))
		for _, f := range list {
			m := f.Message
			if m == "" {
				m = f.Msg
			}
			out = append(out, FieldError{Field: f.Field, Message: m})
		}
		return out
	}
	var messages []string
	if json.Unmarshal(raw, &messages) == nil {
		out := make([]FieldError, 0, len(messages))
		for _, m := range messages {
			out = append(out, FieldError{Message: m})
		}
		return out
	}
	var byField map[string]json.RawMessage
	if json.Unmarshal(raw, &byField) != nil {
		return nil
	}
	names := make([]string, 0, len(byField))
	for k := range byField {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []FieldError
	for _, name := range names {
		if s := jsonScalar(byField[name]); s != "" {
			out = append(out, FieldError{Field: name, Message: s})
			continue
		}
		var ms []string
		if json.Unmarshal(byField[name], &ms) == nil {
			out = append(out, FieldError{Field: name, Message: strings.Join(ms, "; ")})
		}
	}
	return out
}
