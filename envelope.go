package payments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// MaxResponseBytes caps how much of a response body the SDK reads. A larger
// body gives a *MalformedResponseError (or, on an error status, an *APIError
// with the body cut).
const MaxResponseBytes = 4 << 20

// maxErrorBodyBytes caps APIError.Body.
const maxErrorBodyBytes = 16 << 10

// dataView holds a JSON value as a slice of the input itself, not a copy:
// json.Unmarshal hands UnmarshalJSON a sub-slice of its input, and the body
// is this call's own buffer, never reused or changed.
type dataView []byte

// UnmarshalJSON keeps b, a slice of the body.
func (d *dataView) UnmarshalJSON(b []byte) error {
	*d = b
	return nil
}

// discard decodes nothing: the data of a Do call without out.
type discard struct{}

func (*discard) UnmarshalJSON([]byte) error { return nil }

var discardData discard

// decodeScratch is where a call's answer is decoded, and its params copied
// for encoding: part of the call's allocation (see call), not one of its own.
type decodeScratch struct {
	env envelope
	// recipient and virtualAccount are what fastEnvelope decodes those
	// resources into (fastTargetOf).
	recipient      recipientWire
	virtualAccount virtualAccountWire
	// slow decodes with encoding/json alone, as before fastEnvelope:
	// TestFastDecodeIsEncodingJSON compares the two.
	slow bool
	// wire is the copy of the params that encodeBody marshals (encode.go).
	wire wireScratch
	// payment is what a payment decodes into (Payment.decoder).
	payment paymentWire
}

type envelope struct {
	Success *bool           `json:"success"`
	Message string          `json:"message"`
	Stan    string          `json:"stan"`
	Code    json.RawMessage `json:"code"`
	Errors  json.RawMessage `json:"errors"`
	Error   json.RawMessage `json:"error"`
	// Data holds a pointer to what data decodes into, so that the envelope
	// and its data are decoded in one pass; null sets it to nil.
	Data any `json:"data"`

	// flag is what Success points to when fastEnvelope reads the body.
	flag bool
}

// decode turns an answer into the operation's result: data decoded into out
// (a resource also gets r), or a typed error. op says whether a success
// without data is complete (dataOptional) and what the data must carry
// (check). The envelope and its data are decoded in one pass: the
// one-pass reader's (fastdecode.go) for a body in the assumed shape, else
// encoding/json's; the raw data is sliced out of the body only when asked.
func (c *Client) decode(r *Response, raw []byte, readErr error, out any, op *operation, found *surprises, scratch *decodeScratch) error {
	r.Body = raw
	if r.StatusCode < 200 || r.StatusCode > 299 {
		return c.apiError(r, raw, readErr, found)
	}
	successStatus(found, op, r.StatusCode)
	malformed := func(reason string, err error) error {
		return newMalformed(reason, r, err, c.key.raw)
	}
	switch {
	case readErr == errBodyTooLarge:
		return malformed(fmt.Sprintf("the body exceeds %d bytes", MaxResponseBytes), nil)
	case readErr != nil:
		return malformed("reading the body failed", readErr)
	case len(bytes.TrimSpace(raw)) == 0 && r.StatusCode == http.StatusNoContent && op.dataOptional:
		// 204 No Content is a complete answer for an operation whose
		// response carries no resource (Trigger, Do).
		return nil
	case len(bytes.TrimSpace(raw)) == 0:
		return malformed("the body is empty", nil)
	}
	var fin finisher
	var own dataDecoder // decodes the data member after the envelope
	var ownData *dataView
	env := &scratch.env
	*env = envelope{Data: out}
	switch o := out.(type) {
	case nil:
		env.Data = &discardData
	case *json.RawMessage:
		env.Data = (*dataView)(o) // a slice of the body, not a copy
	case wired:
		fin = o.decoder(scratch)
		env.Data = fin
	case dataDecoder:
		own, ownData = o, new(dataView)
		env.Data = ownData
	}
	// The shortcut first (fastdecode.go); whatever it will not take,
	// encoding/json reads as before, from the state decode began with.
	data := env.Data
	target, fast := fastTargetOf(out, fin, scratch)
	fast = fast && !scratch.slow
	switch {
	case fast && fastEnvelope(raw, env, target):
		fastCommit(out, scratch)
	case fast:
		fast = false
		fastUndo(out, fin)
		*env = envelope{Data: data}
	}
	if !fast {
		if err := json.Unmarshal(raw, env); err != nil {
			return c.undecodable(r, raw, err, op)
		}
	}
	r.Stan, r.Message = c.scrub(env.Stan), c.scrub(env.Message)
	if env.Success != nil && !*env.Success {
		errorBodySurprises(found, raw, env, true, r.Header)
		return c.apiErrorFrom(r, raw, env)
	}
	if env.Data == nil && !op.dataOptional { // null
		return malformed("the envelope has no data", nil)
	}
	var unusable string // what finish found missing, reported after the checks
	if fin != nil && env.Data != nil {
		unusable = fin.finish(op.whole)
	}
	if own != nil {
		if err := own.decodeData(*ownData); err != nil {
			return newMalformed("data does not match the expected resource", r, err, c.key.raw)
		}
	}
	if res, ok := out.(resource); ok {
		res.setResponse(r, nil)
	}
	if op.check != nil {
		if env.Success == nil {
			return malformed("the envelope has no success flag", nil)
		}
		if reason := op.check(out); reason != "" {
			if dataOf(raw) == nil {
				reason = "the envelope has no data"
			}
			return malformed(reason, nil)
		}
	}
	if unusable != "" && !(op.dataOptional && dataOf(raw) == nil) {
		return malformed(unusable, nil)
	}
	if op.agree != nil {
		if reason, keep := op.agree(op.sent, op.fields, out); reason != "" {
			return newMalformedKeep(reason, keep, r, nil, c.key.raw)
		}
	}
	dataSurprises(found, raw, out, fast)
	return nil
}

// undecodable says why a 2xx body did not decode, found by decoding it once
// more with data left raw (a failure costs what it likes): a success:false
// envelope is an *APIError whatever its data, an envelope whose data is not
// the resource is a *MalformedResponseError saying so, and anything else is
// not the envelope.
func (c *Client) undecodable(r *Response, raw []byte, err error, op *operation) error {
	var data dataView
	env := envelope{Data: &data}
	if json.Unmarshal(raw, &env) != nil {
		return newMalformed(notEnvelopeReason(r.Header), r, err, c.key.raw)
	}
	r.Stan, r.Message = c.scrub(env.Stan), c.scrub(env.Message)
	if env.Success != nil && !*env.Success {
		return c.apiErrorFrom(r, raw, &env)
	}
	return newMalformed("data does not match the expected resource", r, err, c.key.raw)
}

// lacking names the members whose value is empty, as the reason a resource
// is unusable ("" when none is): lacking("id", r.ID) is "data has no id".
func lacking(nameValue ...string) string {
	var names []string
	for i := 0; i+1 < len(nameValue); i += 2 {
		if nameValue[i+1] == "" {
			names = append(names, nameValue[i])
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "data has no " + strings.Join(names, ", ")
}

// dataDecoder is a resource whose JSON from the service differs from its
// fields (Payment with a flat quote, VirtualAccountPayment and its field name
// variants). The SDK's decoding calls decodeData; a caller's json.Unmarshal
// does plain decoding of the fields.
type dataDecoder interface {
	decodeData(data []byte) error
}

// unmarshalData is json.Unmarshal(data, out), except that a dataDecoder
// decodes (and so validates) data itself.
func unmarshalData(data []byte, out any) error {
	if d, ok := out.(dataDecoder); ok {
		return d.decodeData(data)
	}
	return json.Unmarshal(data, out)
}

func notEnvelopeReason(h http.Header) string {
	ct := h.Get("Content-Type")
	switch {
	case strings.Contains(ct, "html"):
		return "the body is an HTML page (" + strconv.Quote(ct) + "), not the JSON envelope; a proxy may have answered"
	case ct != "" && !strings.Contains(ct, "json"):
		return "the body is " + strconv.Quote(ct) + ", not the JSON envelope"
	}
	return "the body is not the JSON envelope"
}

// readBody reads at most MaxResponseBytes of the body (errBodyTooLarge past
// that). With a Content-Length, which net/http enforces, it reads into a
// buffer of exactly that size: one allocation, where io.ReadAll grows its
// buffer from 512 bytes (2-3 more allocations per call, measured).
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= MaxResponseBytes {
		raw := make([]byte, n)
		got, err := io.ReadFull(resp.Body, raw)
		return raw[:got], err
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err == nil && len(raw) > MaxResponseBytes {
		return raw[:MaxResponseBytes], errBodyTooLarge
	}
	return raw, err
}

var errBodyTooLarge = errors.New("body too large")

// apiError builds the error for a non-2xx answer, whatever its body: the
// envelope, another JSON shape, an HTML page, text, or nothing. readErr is
// why the body could not be read in full (the context's deadline, a dropped
// connection), or nil.
func (c *Client) apiError(r *Response, raw []byte, readErr error, found *surprises) error {
	if readErr == errBodyTooLarge {
		readErr = nil // documented: the body is cut at the cap
	}
	env := envelope{Data: &discardData}
	switch {
	case len(bytes.TrimSpace(raw)) == 0 && readErr == nil:
		errorBodySurprises(found, raw, &env, false, r.Header)
		env = envelope{Message: "the body is empty"}
	case json.Unmarshal(raw, &env) == nil:
		errorBodySurprises(found, raw, &env, true, r.Header)
		r.Stan, r.Message = c.scrub(env.Stan), c.scrub(env.Message)
	case readErr != nil:
		// The status came but the body stopped: say so rather than blame
		// the body's format, and keep the cause for errors.Is.
		env = envelope{Message: "reading the body failed: " + readErr.Error()}
	default:
		// Say what came instead of the envelope (an HTML page from a proxy,
		// text): the body itself stays in APIError.Body.
		errorBodySurprises(found, raw, &env, false, r.Header)
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
		Code:           ErrorCode(jsonScalar(env.Code)),
		Errors:         fieldErrors(env.Errors),
		Header:         r.Header,
		IdempotencyKey: r.IdempotencyKey,
		Attempts:       r.Attempts,
		Replayed:       strings.EqualFold(strings.TrimSpace(r.Header.Get("Idempotent-Replayed")), "true"),
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
	e.Code = ErrorCode(redact.Secrets(string(e.Code), c.key.raw))
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
func errorMember(raw json.RawMessage, code *ErrorCode) string {
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
		*code = ErrorCode(jsonScalar(obj.Code))
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

// looseString decodes a JSON string, or the literal text of a JSON number (an
// id or an account number sent as a number); anything else decodes to "".
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		v, err := unquote(b)
		if err != nil {
			return err
		}
		*s = looseString(v)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*s = looseString(b)
	default:
		*s = ""
	}
	return nil
}

// unquote decodes the JSON string literal b. Ids, event names and
// timestamps are printable ASCII with nothing to unescape: those are their
// own bytes, without a call of json.Unmarshal (6 of the 33 allocations of a
// verified, parsed webhook, measured); anything else goes to json.Unmarshal.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		in := b[1 : len(b)-1]
		if !bytes.ContainsFunc(in, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || r >= 0x7f }) {
			return string(in), nil
		}
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}
