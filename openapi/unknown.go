package openapi

import (
	"fmt"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// unknownValueKey marks a branch of a schema that accepts a value the SDK
// does not know (an unknown payment status or event kind): allowed, and
// reported by a Strict contract.
const unknownValueKey = "x-unknown-value"

// otherRequestFields is the row of a request member the document does not
// name.
const otherRequestFields = "Other request fields"

// unknowns lists, for a body that holds the document, what it carries that
// the document does not describe: members no applicable schema names, and
// values that only an x-unknown-value branch accepts.
func unknowns(rt *route, where string, root *openapi3.SchemaRef, value any, base string) []*Violation {
	w := &walker{rt: rt, where: where, root: root, base: base}
	if where == "request body" && rt.id != webhookOperation {
		// What the SDK sends beyond the document is WithBodyField's.
		w.extra = otherRequestFields
	}
	w.walk([]*openapi3.SchemaRef{root}, value, nil)
	return w.out
}

type walker struct {
	rt    *route
	where string
	root  *openapi3.SchemaRef
	base  string
	extra string // the row of a member the document does not name, if fixed
	out   []*Violation
}

// report adds an unknown value, or member, at at; owner is where its row
// is looked up.
func (w *walker) report(at, owner []string, member bool, detail string) {
	a := assumptionAt(w.root, owner, w.base)
	if member && w.extra != "" {
		a = w.extra
	}
	w.out = append(w.out, &Violation{
		Operation: w.rt.id, Where: w.where + " " + pointer(at), Detail: detail, Unknown: true, Assumption: a,
	})
}

// walk visits value, described by all of schemas at once.
func (w *walker) walk(schemas []*openapi3.SchemaRef, value any, at []string) {
	var flat []*openapi3.Schema
	for _, s := range schemas {
		flat = flatten(s, value, flat, 0)
	}
	for _, s := range flat {
		if d := extension(s.Extensions, unknownValueKey); d != "" {
			if str, ok := value.(string); ok && len(str) <= 64 {
				d = fmt.Sprintf("%q is %s", str, d)
			}
			w.report(at, at, false, d)
		}
	}
	switch v := value.(type) {
	case map[string]any:
		described := slices.ContainsFunc(flat, func(s *openapi3.Schema) bool {
			return s.Properties != nil || s.AdditionalProperties.Schema != nil || s.AdditionalProperties.Has != nil
		})
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			var subs []*openapi3.SchemaRef
			free := false
			for _, s := range flat {
				switch {
				case s.Properties[k] != nil:
					subs = append(subs, s.Properties[k])
				case s.AdditionalProperties.Schema != nil:
					subs = append(subs, s.AdditionalProperties.Schema)
				case s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has:
					free = true
				}
			}
			child := append(slices.Clone(at), k)
			if len(subs) == 0 && !free && described {
				// Its row: one whose schema describes it, which none does,
				// so the operation's; the request's own for what the SDK sends.
				w.report(child, child, true, "is a member the document does not describe")
				continue
			}
			w.walk(subs, v[k], child)
		}
	case []any:
		var items []*openapi3.SchemaRef
		for _, s := range flat {
			if s.Items != nil {
				items = append(items, s.Items)
			}
		}
		for i, e := range v {
			w.walk(items, e, append(slices.Clone(at), fmt.Sprint(i)))
		}
	}
}

// flatten appends the schemas that apply to value: s, what it is composed
// of (allOf; the anyOf and oneOf branches value matches; then or else as
// value matches if).
func flatten(s *openapi3.SchemaRef, value any, out []*openapi3.Schema, depth int) []*openapi3.Schema {
	if s == nil || s.Value == nil || depth > 32 {
		return out
	}
	v := s.Value
	out = append(out, v)
	for _, sub := range v.AllOf {
		out = flatten(sub, value, out, depth+1)
	}
	for _, sub := range append(slices.Clone(v.AnyOf), v.OneOf...) {
		if matches(sub, value) {
			out = flatten(sub, value, out, depth+1)
		}
	}
	if v.If != nil {
		if matches(v.If, value) {
			out = flatten(v.Then, value, out, depth+1)
		} else {
			out = flatten(v.Else, value, out, depth+1)
		}
	}
	return out
}

func matches(s *openapi3.SchemaRef, value any) bool {
	return s != nil && s.Value != nil && s.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()) == nil
}
