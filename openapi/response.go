package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// statusAssumption is the row that a status the document does not expect
// breaks.
const statusAssumption = "Status codes"

// CheckResponse checks the answer to req: its status against the
// operation's responses, its headers (Idempotent-Replayed, Retry-After) and
// its body (the envelope and the resource, or the error body). It returns
// nil, or Violations.
func (c *Contract) CheckResponse(req *http.Request, status int, header http.Header, body []byte) error {
	rt, _ := c.find(req)
	if rt == nil {
		return result([]*Violation{noRoute(req)})
	}
	ref := rt.op.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return result([]*Violation{{
			Operation: rt.id, Assumption: statusAssumption, Where: "response status",
			Detail: fmt.Sprintf("%d is not an answer the document expects (it expects %s)", status, strings.Join(expected(rt.op), ", ")),
		}})
	}
	resp := ref.Value
	// The row of the answer as a whole: the error body's for an error, the
	// operation's for a success.
	base := rt.assumption
	if a := extension(resp.Extensions, assumptionKey); a != "" && a != statusAssumption {
		base = a
	}
	var vs []*Violation
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if v := checkHeader(rt, name, resp.Headers[name].Value, header); v != nil {
			vs = append(vs, v)
		}
	}
	if len(resp.Content) == 0 {
		return result(vs)
	}
	ct := header.Get("Content-Type")
	mt := resp.Content.Get(ct)
	if mt == nil {
		vs = append(vs, &Violation{Operation: rt.id, Assumption: base, Where: "response header Content-Type",
			Detail: fmt.Sprintf("is %q, want application/json", ct)})
		return result(vs)
	}
	vs = append(vs, c.checkBody(rt, "response body", mt.Schema, body, base)...)
	return result(vs)
}

// expected lists the statuses an operation's responses name.
func expected(op *openapi3.Operation) []string {
	var out []string
	for code := range op.Responses.Map() {
		out = append(out, code)
	}
	slices.Sort(out)
	return out
}

// checkHeader checks one response header the document describes.
func checkHeader(rt *route, name string, h *openapi3.Header, header http.Header) *Violation {
	if h == nil {
		return nil
	}
	v := &Violation{Operation: rt.id, Assumption: extension(h.Extensions, assumptionKey), Where: "response header " + name}
	values := header.Values(name)
	if len(values) == 0 {
		if !h.Required {
			return nil
		}
		v.Detail = "is missing"
		return v
	}
	if len(values) > 1 {
		v.Detail = "is sent more than once"
		return v
	}
	if h.Schema == nil || h.Schema.Value == nil {
		return nil
	}
	if err := h.Schema.Value.VisitJSON(values[0], openapi3.EnableJSONSchema2020()); err != nil {
		v.Detail = "does not match the document: " + reason(err)
		return v
	}
	return nil
}
