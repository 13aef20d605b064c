package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders the validator's messages of kinds that carry no value.
var printer = message.NewPrinter(language.English)

// checkBody validates a JSON body against a body schema of the document
// and names, for each problem, the row of docs/assumptions.md it breaks:
// the deepest x-assumption on the way from the body's schema to the value
// (base when there is none).
func (c *Contract) checkBody(rt *route, where string, ref *openapi3.SchemaRef, body []byte, base string) []*Violation {
	sch := c.bodies[ref.Ref]
	if sch == nil {
		return []*Violation{{Operation: rt.id, Assumption: base, Where: where, Detail: "the document has no compiled schema for " + ref.Ref}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []*Violation{{Operation: rt.id, Assumption: base, Where: where,
			Detail: fmt.Sprintf("is not JSON (%d bytes)", len(body))}}
	}
	var out []*Violation
	var verr *jsonschema.ValidationError
	if err := sch.Validate(inst); errors.As(err, &verr) {
		for _, l := range leaves(verr, nil) {
			// A missing member belongs to the row of the object that
			// requires it, not to the row of the member's type.
			owner := l.at
			if l.missing {
				owner = l.at[:len(l.at)-1]
			}
			out = append(out, &Violation{
				Operation: rt.id, Where: where + " " + pointer(l.at), Detail: l.detail,
				Assumption: assumptionAt(ref, owner, base),
			})
		}
	} else if err != nil {
		out = append(out, &Violation{Operation: rt.id, Assumption: base, Where: where, Detail: err.Error()})
	}
	if c.strict && len(out) == 0 {
		var v any
		if json.Unmarshal(body, &v) == nil {
			out = append(out, unknowns(rt, where, ref, v, base)...)
		}
	}
	return out
}

// leaf is one problem of a body: where it is, and what.
type leaf struct {
	at      []string
	detail  string
	missing bool // a required member that is not there
}

// leaves flattens the validator's tree of errors into its problems. A
// failed anyOf or oneOf is one problem (the value has none of the accepted
// shapes), not one per branch; a missing required member is one problem
// per member, located at the member.
func leaves(e *jsonschema.ValidationError, out []leaf) []leaf {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var inner []string
		for _, l := range leaves(&jsonschema.ValidationError{Causes: e.Causes, ErrorKind: &kind.Group{}}, nil) {
			inner = append(inner, strings.TrimPrefix(pointer(l.at[len(e.InstanceLocation):])+" ", "/ ")+l.detail)
		}
		d := "has none of the accepted shapes"
		if k, ok := k.(*kind.OneOf); ok && k.Subschemas != nil {
			d = "matches more than one of the accepted shapes"
		}
		if len(inner) > 0 {
			d += ": " + strings.Join(inner, "; or ")
		}
		return append(out, leaf{at: e.InstanceLocation, detail: d})
	case *kind.Required:
		for _, m := range k.Missing {
			out = append(out, leaf{at: append(append([]string(nil), e.InstanceLocation...), m), detail: "is missing", missing: true})
		}
		return out
	}
	if len(e.Causes) == 0 {
		return append(out, leaf{at: e.InstanceLocation, detail: describe(e.ErrorKind)})
	}
	for _, cause := range e.Causes {
		out = leaves(cause, out)
	}
	return out
}

// describe says what a failed keyword means, without the failing value
// (which may be an account number or another piece of personal data).
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("is %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Pattern:
		return "does not match the pattern " + k.Want
	case *kind.Enum:
		return "is not one of the values the document lists"
	case *kind.Const:
		return fmt.Sprintf("must be %v", k.Want)
	case *kind.Format:
		return "is not a valid " + k.Want
	case *kind.Not:
		return "has a value the document rules out"
	case *kind.FalseSchema:
		return "is not allowed"
	}
	return k.LocalizedString(printer)
}

// pointer renders a location as a JSON pointer ("/data/quote/fee").
func pointer(at []string) string {
	if len(at) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, tok := range at {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// assumptionAt finds the row a problem at the location belongs to: the
// x-assumption of the deepest schema on the way there that describes the
// next step (so that a payment's own fields inside an initiate answer do
// not take the quote's row), else base.
func assumptionAt(root *openapi3.SchemaRef, at []string, base string) string {
	best, bestDepth := base, -1
	var visit func(s *openapi3.SchemaRef, depth int, seen int)
	visit = func(s *openapi3.SchemaRef, depth int, seen int) {
		if s == nil || s.Value == nil || seen > 64 {
			return
		}
		v := s.Value
		rest := at[depth:]
		if a := extension(v.Extensions, assumptionKey); a != "" && depth >= bestDepth && (len(rest) == 0 || declares(v, rest[0], 0)) {
			best, bestDepth = a, depth
		}
		for _, sub := range composed(v) {
			visit(sub, depth, seen+1)
		}
		if len(rest) == 0 {
			return
		}
		if p := v.Properties[rest[0]]; p != nil {
			visit(p, depth+1, seen+1)
		}
		if _, err := strconv.Atoi(rest[0]); err == nil && v.Items != nil {
			visit(v.Items, depth+1, seen+1)
		}
		if ap := v.AdditionalProperties.Schema; ap != nil {
			visit(ap, depth+1, seen+1)
		}
	}
	visit(root, 0, 0)
	return best
}

// composed lists the subschemas that apply to the same value.
func composed(v *openapi3.Schema) []*openapi3.SchemaRef {
	var out []*openapi3.SchemaRef
	out = append(out, v.AllOf...)
	out = append(out, v.AnyOf...)
	out = append(out, v.OneOf...)
	for _, s := range []*openapi3.SchemaRef{v.Then, v.Else} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// declares reports whether the schema, or one it is composed of, describes
// the member or item tok.
func declares(v *openapi3.Schema, tok string, depth int) bool {
	if v == nil || depth > 16 {
		return false
	}
	if _, ok := v.Properties[tok]; ok {
		return true
	}
	if _, err := strconv.Atoi(tok); err == nil && v.Items != nil {
		return true
	}
	if v.AdditionalProperties.Schema != nil {
		return true
	}
	for _, sub := range composed(v) {
		if sub != nil && declares(sub.Value, tok, depth+1) {
			return true
		}
	}
	return false
}
