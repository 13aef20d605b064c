package paymentstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// maxBodyBytes caps a request body: an identification image may be several
// megabytes of Base64.
const maxBodyBytes = 16 << 20

// Bounds the fake enforces where the specification gives none.
const (
	maxNameLen    = 255
	maxTextLen    = 1024
	maxCodeLen    = 64
	maxAmountExp  = 18 // amounts below 10^18
	maxAmountDecs = 18 // at most 18 decimal places
)

var (
	accountNumberPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 -]{0,33}$`)
	bvnPattern           = regexp.MustCompile(`^[0-9]{11}$`)
	maxAmount            = decimal.New(1, maxAmountExp)
	minAmountExp         = int32(-64) // anything finer is refused before arithmetic
)

// problems collects field errors so that a response names them all.
type problems []fieldProblem

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, fieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// readBody reads the request body, refusing one over limit bytes or, when
// checkType, with a media type other than JSON. (The admin API does not
// check it, so that curl -d works as it is.)
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64, checkType bool) ([]byte, *response) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, s.fail(http.StatusRequestEntityTooLarge, payments.CodePayloadTooLarge,
				fmt.Sprintf("the body is larger than %d bytes", limit))
		}
		return nil, s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, "reading the body failed")
	}
	if ct := r.Header.Get("Content-Type"); checkType && ct != "" && len(bytes.TrimSpace(body)) > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, s.fail(http.StatusUnsupportedMediaType, payments.CodeUnsupportedMediaType,
				"the body must be JSON (Content-Type: application/json)")
		}
	}
	return body, nil
}

// object reads the members of one JSON object one at a time, so that a
// member of the wrong type is reported against its own (dotted) name.
type object struct {
	prefix string
	m      map[string]json.RawMessage
	p      *problems
	notes  *[]string
}

// parseObject decodes a request body that must be a single JSON object.
func parseObject(body []byte, p *problems, notes *[]string) (*object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %v", err)
	}
	if m == nil {
		return nil, errors.New("the body is null; send a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the body has data after the JSON object")
	}
	return &object{m: m, p: p, notes: notes}, nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func (o *object) name(field string) string { return o.prefix + field }

// present reports whether field is there and not null.
func (o *object) present(field string) bool {
	raw, ok := o.m[field]
	return ok && !isNull(raw)
}

// str returns a string member; absent or null gives "".
func (o *object) str(field string) string {
	raw, ok := o.m[field]
	if !ok || isNull(raw) {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.p.add(o.name(field), "must be a string")
		return ""
	}
	return s
}

// text returns an optional string member of at most max characters.
func (o *object) text(field string, max int) string {
	s := o.str(field)
	if utf8.RuneCountInString(s) > max {
		o.p.add(o.name(field), "is longer than %d characters", max)
	}
	return s
}

// required returns a string member that must be present and not blank.
func (o *object) required(field string, max int) string {
	if !o.present(field) {
		o.p.add(o.name(field), "is required")
		return ""
	}
	var s string
	if err := json.Unmarshal(o.m[field], &s); err != nil {
		o.p.add(o.name(field), "must be a string")
		return ""
	}
	switch {
	case strings.TrimSpace(s) == "":
		o.p.add(o.name(field), "is required")
	case utf8.RuneCountInString(s) > max:
		o.p.add(o.name(field), "is longer than %d characters", max)
	}
	return s
}

// child returns a nested object member, or nil when it is absent or null.
func (o *object) child(field string) *object {
	raw, ok := o.m[field]
	if !ok || isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		o.p.add(o.name(field), "must be an object")
		return nil
	}
	return &object{prefix: o.name(field) + ".", m: m, p: o.p, notes: o.notes}
}

// decimalMember reads a JSON number, or a JSON string holding one, with its
// exact digits; quoted says it came as a string. ok is false when the member
// is absent or not a number (the latter is reported).
func (o *object) decimalMember(field string) (d decimal.Decimal, quoted, ok bool) {
	raw, present := o.m[field]
	if !present || isNull(raw) {
		return decimal.Decimal{}, false, false
	}
	raw = bytes.TrimSpace(raw)
	text := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			o.p.add(o.name(field), "must be a number")
			return decimal.Decimal{}, false, false
		}
		quoted = true
	} else if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		o.p.add(o.name(field), "must be a number")
		return decimal.Decimal{}, false, false
	}
	d, err := decimal.NewFromString(strings.TrimSpace(text))
	if err != nil {
		o.p.add(o.name(field), "must be a number")
		return decimal.Decimal{}, quoted, false
	}
	return d, quoted, true
}

// amount returns a money member. The specification sends amounts as JSON
// numbers; their exact digits are kept. A JSON string holding a number is
// accepted too, and noted in the request log. ok is false when the member is
// absent or invalid (an invalid one is reported).
func (o *object) amount(field string) (decimal.Decimal, bool) {
	d, quoted, ok := o.decimalMember(field)
	if quoted {
		*o.notes = append(*o.notes, o.name(field)+" was sent as a JSON string; the specification says number")
	}
	if !ok {
		return decimal.Decimal{}, false
	}
	if msg := amountProblem(d); msg != "" {
		o.p.add(o.name(field), "%s", msg)
		return decimal.Decimal{}, false
	}
	return d, true
}

// amountProblem says what is wrong with a money amount, or "" when it is
// positive, below 10^18 and has at most 18 decimal places. The exponent is
// checked first, so a huge one costs no arithmetic.
func amountProblem(d decimal.Decimal) string {
	switch {
	case d.Exponent() > maxAmountExp:
		return fmt.Sprintf("must be less than 10^%d", maxAmountExp)
	case d.Exponent() < minAmountExp || -d.Exponent() > maxAmountDecs:
		return fmt.Sprintf("has more than %d decimal places", maxAmountDecs)
	case !d.IsPositive():
		return "must be greater than zero"
	case d.Cmp(maxAmount) >= 0:
		return fmt.Sprintf("must be less than 10^%d", maxAmountExp)
	}
	return ""
}

// adminObject parses the body of an admin request. When optional, an empty
// body is an empty object.
func (s *Server) adminObject(rq *apiRequest, optional bool) (*object, *problems, *response) {
	p := new(problems)
	if optional && len(bytes.TrimSpace(rq.body)) == 0 {
		return &object{m: map[string]json.RawMessage{}, p: p, notes: &rq.notes}, p, nil
	}
	o, err := parseObject(rq.body, p, &rq.notes)
	if err != nil {
		return nil, nil, s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}
	return o, p, nil
}

// only reports every member that is not one of fields, so that a typo is
// not silently ignored.
func (o *object) only(fields ...string) {
	var unknown []string
	for k := range o.m {
		if !slices.Contains(fields, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		o.p.add(o.name(k), "is not a field of this request (known: %s)", strings.Join(fields, ", "))
	}
}

// number returns a numeric member: a JSON number, or a string holding one,
// with its exact digits. ok is false when the member is absent or invalid
// (an invalid one is reported). The exponent is bounded before any
// arithmetic, so that a number such as 1e999999999 costs nothing.
func (o *object) number(field string) (decimal.Decimal, bool) {
	d, _, ok := o.decimalMember(field)
	switch {
	case !ok:
	case d.Exponent() < -maxAmountDecs:
		o.p.add(o.name(field), "has more than %d decimal places", maxAmountDecs)
	case d.Exponent() > maxAmountExp:
		o.p.add(o.name(field), "is too large")
	default:
		return d, true
	}
	return decimal.Decimal{}, false
}

// integer returns a whole-number member from lo to hi.
func (o *object) integer(field string, lo, hi int64) (int64, bool) {
	d, ok := o.number(field)
	if !ok {
		return 0, false
	}
	if !d.Equal(d.Truncate(0)) || d.Cmp(decimal.NewFromInt(lo)) < 0 || d.Cmp(decimal.NewFromInt(hi)) > 0 {
		o.p.add(o.name(field), "must be a whole number from %d to %d", lo, hi)
		return 0, false
	}
	return d.IntPart(), true
}

// seconds returns a member counting seconds (fractions allowed, rounded to
// nanoseconds) as a duration from lo to hi.
func (o *object) seconds(field string, lo, hi time.Duration) (time.Duration, bool) {
	d, ok := o.number(field)
	if !ok {
		return 0, false
	}
	ns := d.Shift(9).Round(0)
	if ns.Cmp(decimal.NewFromInt(int64(lo))) < 0 || ns.Cmp(decimal.NewFromInt(int64(hi))) > 0 {
		o.p.add(o.name(field), "must be from %v to %v seconds", lo.Seconds(), hi.Seconds())
		return 0, false
	}
	return time.Duration(ns.IntPart()), true
}

// Checks on values already read.

func (p *problems) oneOf(field, v string, allowed ...string) {
	if v == "" {
		return
	}
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	p.add(field, "must be one of %s", strings.Join(allowed, ", "))
}

func (p *problems) currency(field, v string) {
	if v != "" && !currencyPattern.MatchString(v) {
		p.add(field, "must be a three-letter currency code in capitals, such as NGN")
	}
}

func (p *problems) accountNumber(field, v string) {
	if v != "" && !accountNumberPattern.MatchString(v) {
		p.add(field, "must be 1 to 34 letters, digits, spaces or dashes")
	}
}

func (p *problems) uuid(field, v string) {
	if v != "" && (len(v) != 36 || uuid.Validate(v) != nil) {
		p.add(field, "must be a UUID")
	}
}

func (p *problems) email(field, v string) {
	if v == "" {
		return
	}
	if addr, err := mail.ParseAddress(v); err != nil || addr.Address != v || len(v) > 254 {
		p.add(field, "must be a valid email address")
	}
}
