package payments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WithBodyField adds the top-level field name, with value encoded as JSON,
// to the call's request body: for a field the service requires that this SDK
// does not know yet. value may be a json.RawMessage, sent as it is once
// checked. Fields are added after the SDK's own, in the order given; the
// last one given for a name wins.
//
// It never replaces or shadows a field the call's params have: a name equal
// to one of their JSON field names in any letter case ("amount", "AMOUNT",
// "Currency"), sent or left out as empty, is a *ValidationError and nothing
// is sent, since that value would skip the params' validation (and a
// service that matches names without case would take the last). Set such
// a field through the params. With Client.Do, the names of the body given
// are the params.
//
// It changes the body only, never a header: the Idempotency-Key stays the
// call's own (a field named like it, "idempotency_key" say, is refused: use
// WithIdempotencyKey). A value that does not encode as JSON, an empty name,
// a GET, or a body that is not a JSON object (Client.Do with an array) is a
// *ValidationError, and nothing is sent. A call repeated with the same
// idempotency key must send the same fields: the service refuses the same
// key with another body.
func WithBodyField(name string, value any) RequestOption {
	return callOnly{"WithBodyField", func(r *requestConfig) {
		r.bodyFields = append(r.bodyFields, bodyField{name: name, value: value})
	}}
}

// bodyField is one WithBodyField: its value, then its JSON once checked.
type bodyField struct {
	name  string
	value any
	raw   []byte
}

// checkBodyFields encodes each field's value, and reports every bad name or
// value (never the value itself, which may be personal data).
func checkBodyFields(v *validator, fields []bodyField) {
	for i := range fields {
		f := &fields[i]
		label := "WithBodyField(" + f.name + ")"
		if strings.TrimSpace(f.name) == "" || !utf8.ValidString(f.name) {
			v.add("WithBodyField", "needs a field name")
			continue
		}
		if norm := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(f.name)); norm == "idempotencykey" {
			v.add(label, "cannot set the idempotency key: use WithIdempotencyKey")
			continue
		}
		raw, err := json.Marshal(f.value)
		if err != nil {
			v.add(label, "the value is not valid JSON")
			continue
		}
		f.raw = raw
	}
}

// checkFieldCollisions refuses every field whose name equals, in any letter
// case, a field of the body: one its Go type declares (sent or omitted as
// empty) or one its JSON has. Such a field would replace or shadow a value
// the params validate.
func checkFieldCollisions(v *validator, body any, members []member, fields []bodyField) {
	typed := jsonFieldNames(reflect.TypeOf(body), nil, 0)
	for _, m := range members {
		typed = append(typed, m.name)
	}
	for _, f := range fields {
		for _, name := range typed {
			if strings.EqualFold(f.name, name) {
				v.add("WithBodyField("+f.name+")", "is the params' field "+strconv.Quote(name)+
					": set it in the params, where it is validated")
				break
			}
		}
	}
}

// jsonFieldNames appends to names the JSON names of the fields of struct
// type t (through pointers and embedded structs, as encoding/json does).
func jsonFieldNames(t reflect.Type, names []string, depth int) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || depth > 8 {
		return names
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			names = jsonFieldNames(sf.Type, names, depth+1)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		names = append(names, name)
	}
	return names
}

// errBodyNotObject is why fields cannot be added to a body.
var errBodyNotObject = errors.New("the request body is not a JSON object")

// objectMembers returns the members of body (compact JSON, or nil for none),
// in order. The SDK's own bodies are objects; nil has no members.
func objectMembers(body []byte) ([]member, error) {
	var members []member
	if body != nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, errBodyNotObject
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, errBodyNotObject
			}
			var m member
			m.name, _ = t.(string)
			if err := dec.Decode(&m.value); err != nil {
				return nil, errBodyNotObject
			}
			members = append(members, m)
		}
	}
	return members, nil
}

// withBodyFields returns the object of members with fields set after them,
// in order: the last one given for a name wins.
func withBodyFields(members []member, fields []bodyField) []byte {
	n := 2
	for _, m := range members {
		n += len(m.name) + len(m.value) + 4
	}
	for _, f := range fields {
		i := 0
		for i < len(members) && members[i].name != f.name {
			i++
		}
		if i == len(members) {
			members = append(members, member{name: f.name})
		}
		members[i].value = f.raw
	}
	out := make([]byte, 0, n+64)
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(m.name)
		out = append(append(append(out, name...), ':'), m.value...)
	}
	return append(out, '}')
}

// member is one name and value of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// encodeBody is the request body: body as encoding/json writes it (nil for
// none; the SDK's params are plain structs, so a struct of yours that embeds
// them goes whole), with the call's WithBodyField fields set. A body the fields cannot go into is a
// *ValidationError. w is the call's scratch for encode.go's copy of params.
func (c *Client) encodeBody(op *operation, body any, fields []bodyField, w *wireScratch) ([]byte, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(wireBody(body, w)); err != nil { // encode.go
			return nil, fmt.Errorf("payments: encoding the request: %w", err)
		}
	}
	if len(fields) == 0 {
		return b, nil
	}
	var v validator
	if op.Method == http.MethodGet {
		v.add("WithBodyField", "a GET request has no body")
		return nil, v.err()
	}
	if bytes.Equal(b, []byte("null")) {
		b = nil
	}
	members, err := objectMembers(b)
	if err != nil {
		v.add("WithBodyField", err.Error())
		return nil, v.err()
	}
	if checkFieldCollisions(&v, body, members, fields); v.err() != nil {
		return nil, v.err()
	}
	return withBodyFields(members, fields), nil
}
