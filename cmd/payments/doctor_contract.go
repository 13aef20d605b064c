package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// observation is one exchange with the service, as doctor saw it on the
// wire: what a probe sent and what came back.
type observation struct {
	req     *http.Request
	reqBody []byte
	status  int
	header  http.Header
	body    []byte
	err     error  // no answer at all
	why     string // why it was not sent (err is errNotSent)
	obj     map[string]any
}

// what names the exchange in a row: "POST /payments/initiate".
func (o *observation) what() string { return o.req.Method + " " + o.req.URL.Path }

func (o *observation) data() map[string]any {
	m, _ := o.obj["data"].(map[string]any)
	return m
}

// contract is what each answer and delivery is checked against: the
// assumptions as assumedContract states them, or, with a few lines, the
// OpenAPI document's validator (openapi.Contract has these methods). An
// error names the row of docs/assumptions.md it breaks, by Topic: topicOf
// reads it from a Topic() method or from the message.
type contract interface {
	CheckResponse(req *http.Request, status int, header http.Header, body []byte) error
	CheckWebhook(header http.Header, body []byte) error
}

// differsFrom is an assumption that an answer breaks.
type differsFrom struct {
	topic, seen string
}

func (e *differsFrom) Error() string { return e.topic + ": " + e.seen }

// Topic is the row of docs/assumptions.md.
func (e *differsFrom) Topic() string { return e.topic }

func differ(topic, format string, args ...any) error {
	return &differsFrom{topic: topic, seen: fmt.Sprintf(format, args...)}
}

// topicOf returns the row an error of a contract names, or fallback.
func topicOf(err error, fallback string) (topic, seen string) {
	var t interface{ Topic() string }
	if errors.As(err, &t) {
		seen = err.Error()
		if d, ok := err.(*differsFrom); ok {
			seen = d.seen
		}
		return t.Topic(), seen
	}
	best := ""
	for _, tp := range topics {
		if strings.Contains(err.Error(), tp.name) && len(tp.name) > len(best) {
			best = tp.name
		}
	}
	if best == "" {
		best = fallback
	}
	return best, err.Error()
}

// decodeLoose decodes a JSON object with its numbers as written; nil when
// the body is not one.
func decodeLoose(b []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// check runs the contract on an answer and reports, for each row named,
// what differs, or that it holds. A failed request makes the rows "could
// not check".
func (d *doctor) check(o *observation, fallback string, rows ...string) bool {
	if o.err != nil {
		for _, r := range rows {
			d.rep.cannot(r, d.scrub(o.noAnswer()))
		}
		return false
	}
	return d.judge(d.contract.CheckResponse(o.req, o.status, o.header, o.body), o.what(), fallback, rows...)
}

// judge reports the errors of a check under their rows, and a hold for
// each of rows that none names.
func (d *doctor) judge(err error, what, fallback string, rows ...string) bool {
	bad := map[string]bool{}
	for _, e := range flatten(err) {
		topic, seen := topicOf(e, fallback)
		d.rep.differ(topic, d.scrub(what+": "+seen))
		bad[topic] = true
	}
	for _, r := range rows {
		if !bad[r] {
			d.rep.hold(r, "as assumed: "+what)
		}
	}
	return len(bad) == 0
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// assumedContract checks answers against docs/assumptions.md as written.
type assumedContract struct{}

// The operations' assumed success statuses.
var assumedStatus = map[string]int{
	"POST /payments/recipients": http.StatusCreated,
	"POST /payments/initiate":   http.StatusOK,
	"POST /payments/confirm":    http.StatusOK,
	"GET /webhooks/events":      http.StatusOK,
}

// CheckResponse checks the envelope, the status and the data of an answer.
func (assumedContract) CheckResponse(req *http.Request, status int, header http.Header, body []byte) error {
	op := req.Method + " " + req.URL.Path
	if strings.HasPrefix(req.URL.Path, "/webhooks/events/trigger/") {
		op = "POST /webhooks/events/trigger/{event_id}"
	}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	env := decodeLoose(body)
	if env == nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return differ("Error body", "HTTP %d with a %s body that is not the JSON envelope: %.60q", status, orNone(mt), body)
	}
	var errs []error
	for _, f := range []struct{ name, kind string }{{"success", "boolean"}, {"message", "string"}, {"stan", "string"}} {
		if !isKind(env[f.name], f.kind) {
			errs = append(errs, differ(topicForStatus(status), "HTTP %d: the envelope's %s is %s, not a %s", status, f.name, kindOf(env[f.name]), f.kind))
		}
	}
	if status >= 400 {
		return errors.Join(append(errs, checkErrorBody(status, env))...)
	}
	if want, ok := assumedStatus[op]; ok && status != want {
		errs = append(errs, differ("Status codes", "HTTP %d where %d is assumed", status, want))
	}
	data, _ := env["data"].(map[string]any)
	switch op {
	case "POST /payments/initiate", "POST /payments/confirm":
		errs = append(errs, checkPayment(data)...)
	case "GET /webhooks/events":
		errs = append(errs, checkEventPage(data)...)
	}
	return errors.Join(errs...)
}

func topicForStatus(status int) string {
	if status >= 400 {
		return "Error body"
	}
	return "Base URL"
}

// checkErrorBody checks an error envelope: success false, a string code
// among the known ones, field errors as a list or a map.
func checkErrorBody(status int, env map[string]any) error {
	var errs []error
	if env["success"] != false {
		errs = append(errs, differ("Error body", "HTTP %d: success is %v, not false", status, env["success"]))
	}
	switch code := env["code"].(type) {
	case nil:
	case string:
		if !slices.Contains(knownCodes, payments.ErrorCode(code)) {
			errs = append(errs, differ("Error codes", "HTTP %d: code %q is none of the payments.Code... values", status, code))
		}
	default:
		errs = append(errs, differ("Error codes", "HTTP %d: code is %s %v, not a string", status, kindOf(code), code))
	}
	if fe, ok := env["errors"]; ok && fe != nil && fieldNames(fe) == nil {
		b, _ := json.Marshal(fe)
		errs = append(errs, differ("Error body", "HTTP %d: field errors in another shape: %.80s", status, b))
	}
	return errors.Join(errs...)
}

var knownCodes = []payments.ErrorCode{
	payments.CodeValidationFailed, payments.CodeQuoteExpired, payments.CodeQuoteAlreadyConfirmed,
	payments.CodeDuplicateReference, payments.CodeIdempotencyKeyReused, payments.CodeIdempotencyInProgress,
	payments.CodeInvalidIdempotencyKey, payments.CodeUnauthorized, payments.CodeNotFound,
	payments.CodeWebhookNotConfigured, payments.CodeInvalidJSON, payments.CodeMethodNotAllowed,
	payments.CodeUnsupportedMediaType, payments.CodePayloadTooLarge, payments.CodeInternal,
	payments.CodeShuttingDown, payments.CodeInsufficientBalance, payments.CodeRecipientVerificationFailed,
	payments.CodeRecipientNotVerified, payments.CodeUnknownEventCursor,
}

// fieldNames returns the fields named by an errors member in an assumed
// shape ([{"field", "message"}], {"field": "message" or [...]}, or a
// list of messages), sorted; nil for any other shape.
func fieldNames(v any) []string {
	names := []string{}
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			switch it := item.(type) {
			case string:
			case map[string]any:
				f, ok := it["field"].(string)
				if _, msg := it["message"].(string); !ok || !msg {
					return nil
				}
				names = append(names, f)
			default:
				return nil
			}
		}
	case map[string]any:
		for k, m := range v {
			if _, ok := m.(string); !ok && !isStringList(m) {
				return nil
			}
			names = append(names, k)
		}
	default:
		return nil
	}
	sort.Strings(names)
	return names
}

func isStringList(v any) bool {
	l, ok := v.([]any)
	for _, x := range l {
		if _, s := x.(string); !s {
			return false
		}
	}
	return ok
}

func isKind(v any, kind string) bool { return kindOf(v) == kind }

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "absent or null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "list"
	default:
		return "object"
	}
}

var uuidExact = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func isUUID(v any) bool {
	s, ok := v.(string)
	return ok && uuidExact.MatchString(s)
}
