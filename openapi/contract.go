package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed payments-api.yaml
var document []byte

// Document returns the OpenAPI 3.1 document (payments-api.yaml) as YAML.
func Document() []byte { return bytes.Clone(document) }

// assumptionKey is the extension that names a row of docs/assumptions.md.
const assumptionKey = "x-assumption"

// webhookName is the webhook of the document that CheckWebhook checks, and
// webhookOperation its operationId.
const (
	webhookName      = "event"
	webhookOperation = "webhook.event"
)

// schemaBase is the URL under which the document's schemas are compiled.
const schemaBase = "https://payments-go.invalid/payments-api.json"

// Contract is the document, loaded and ready to check against. It is safe
// for concurrent use. Make one with Load.
type Contract struct {
	doc     *openapi3.T
	routes  []*route
	webhook *route
	// bodies are the compiled body schemas, by their $ref in the document.
	bodies map[string]*jsonschema.Schema
	strict bool
}

// route is one operation of the document.
type route struct {
	id         string // operationId
	method     string
	path       string // the template, "/payments/recipients/{id}"
	segs       []string
	item       *openapi3.PathItem
	op         *openapi3.Operation
	assumption string
}

// Load parses and validates the embedded document and compiles its schemas.
// An error means the document itself is broken (a bug of this module).
func Load() (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("openapi: loading payments-api.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: payments-api.yaml is not a valid OpenAPI document: %w", err)
	}
	c := &Contract{doc: doc, bodies: make(map[string]*jsonschema.Schema)}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			c.routes = append(c.routes, newRoute(method, path, item, op))
		}
	}
	slices.SortFunc(c.routes, func(a, b *route) int { return strings.Compare(a.id, b.id) })
	item := doc.Webhooks[webhookName]
	if item == nil || item.Post == nil {
		return nil, errors.New("openapi: payments-api.yaml has no webhook " + webhookName)
	}
	c.webhook = newRoute(http.MethodPost, webhookName, item, item.Post)
	if err := c.compileBodies(); err != nil {
		return nil, err
	}
	return c, nil
}

func newRoute(method, path string, item *openapi3.PathItem, op *openapi3.Operation) *route {
	return &route{
		id: op.OperationID, method: method, path: path, item: item, op: op,
		segs:       strings.Split(strings.TrimPrefix(path, "/"), "/"),
		assumption: extension(op.Extensions, assumptionKey),
	}
}

// compileBodies compiles the schema of every request and response body,
// which the document gives as $refs to components.
func (c *Contract) compileBodies() error {
	raw, err := json.Marshal(c.doc)
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	if err := comp.AddResource(schemaBase, res); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	for _, ref := range c.bodyRefs() {
		if ref.Ref == "" || !strings.HasPrefix(ref.Ref, "#/") {
			return fmt.Errorf("openapi: a body schema must be a $ref to a component, not %q", ref.Ref)
		}
		if _, ok := c.bodies[ref.Ref]; ok {
			continue
		}
		sch, err := comp.Compile(schemaBase + ref.Ref)
		if err != nil {
			return fmt.Errorf("openapi: compiling %s: %w", ref.Ref, err)
		}
		c.bodies[ref.Ref] = sch
	}
	return nil
}

// bodyRefs lists the schema of every body of every operation.
func (c *Contract) bodyRefs() []*openapi3.SchemaRef {
	var out []*openapi3.SchemaRef
	for _, rt := range append(slices.Clone(c.routes), c.webhook) {
		if rb := rt.op.RequestBody; rb != nil && rb.Value != nil {
			for _, mt := range rb.Value.Content {
				out = append(out, mt.Schema)
			}
		}
		for _, resp := range rt.op.Responses.Map() {
			for _, mt := range resp.Value.Content {
				out = append(out, mt.Schema)
			}
		}
	}
	return out
}

// Strict returns a Contract whose checks also report, as violations with
// Unknown set, what the document allows but does not describe: members of
// an object that it does not name, and values marked x-unknown-value (a
// payment status or an event kind the SDK does not know). The contract test
// holds the SDK and paymentstest to it; against a live service it lists
// what the service sends beyond our assumptions.
func (c *Contract) Strict() *Contract {
	s := *c
	s.strict = true
	return &s
}

// operations lists the operationId of every operation and webhook of the
// document.
func (c *Contract) operations() []string {
	out := []string{c.webhook.id}
	for _, rt := range c.routes {
		out = append(out, rt.id)
	}
	return out
}

// Operation returns the operationId of the document's operation that the
// request is for ("payments.confirm"), or "" when none matches its method
// and path.
func (c *Contract) Operation(req *http.Request) string {
	if rt, _ := c.find(req); rt != nil {
		return rt.id
	}
	return ""
}

// Assumption returns the Topic of the docs/assumptions.md row that the
// request's operation as a whole rests on ("Confirm payment", "List
// events"), or "" when the operation is the specification's own or no
// operation matches. A *Violation names the row of the point it is about.
func (c *Contract) Assumption(req *http.Request) string {
	if rt, _ := c.find(req); rt != nil {
		return rt.assumption
	}
	return ""
}

// find matches the request's method and path to an operation. The path may
// carry a prefix of the base URL ("https://host/api"): the operation's
// template is matched against the end of it. Path parameters come back
// unescaped.
func (c *Contract) find(req *http.Request) (*route, map[string]string) {
	if req == nil || req.URL == nil {
		return nil, nil
	}
	segs := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
	for _, rt := range c.routes {
		if rt.method != req.Method || len(segs) < len(rt.segs) {
			continue
		}
		tail := segs[len(segs)-len(rt.segs):]
		params, ok := map[string]string{}, true
		for i, want := range rt.segs {
			if name, isParam := strings.CutPrefix(want, "{"); isParam {
				v, err := url.PathUnescape(tail[i])
				if tail[i] == "" || err != nil {
					ok = false
					break
				}
				params[strings.TrimSuffix(name, "}")] = v
			} else if tail[i] != want {
				ok = false
				break
			}
		}
		if ok {
			return rt, params
		}
	}
	return nil, nil
}

// noRoute is the violation of a request for which the document has no
// operation.
func noRoute(req *http.Request) *Violation {
	where := "request"
	if req != nil && req.URL != nil {
		where = "request " + req.Method + " " + req.URL.EscapedPath()
	}
	return &Violation{Where: where, Detail: "no operation of the document has this method and path"}
}

// CheckRequest checks a request the SDK sends (method, path, query,
// headers, Authorization, and body, which the caller passes because
// req.Body may already have been read). It returns nil, or Violations.
func (c *Contract) CheckRequest(req *http.Request, body []byte) error {
	rt, params := c.find(req)
	if rt == nil {
		return result([]*Violation{noRoute(req)})
	}
	return result(c.checkRequest(rt, req, params, body))
}

// CheckWebhook checks a webhook delivery (its headers and body) against the
// document's webhook: the Payments-Signature header and the event body. It
// returns nil, or Violations.
func (c *Contract) CheckWebhook(header http.Header, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, "http://receiver.invalid/webhooks", nil)
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	return result(c.checkRequest(c.webhook, req, nil, body))
}

func (c *Contract) checkRequest(rt *route, req *http.Request, params map[string]string, body []byte) []*Violation {
	r := req.Clone(context.Background())
	r.Body = http.NoBody
	input := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      &routers.Route{Spec: c.doc, Path: rt.path, PathItem: rt.item, Method: rt.method, Operation: rt.op},
		Options: &openapi3filter.Options{
			ExcludeRequestBody: true, MultiError: true, SkipSettingDefaults: true,
			AuthenticationFunc: bearer,
		},
	}
	vs := c.requestErrors(rt, openapi3filter.ValidateRequest(context.Background(), input))
	rb := rt.op.RequestBody
	switch {
	case rb == nil || rb.Value == nil:
		if len(bytes.TrimSpace(body)) > 0 {
			vs = append(vs, &Violation{Operation: rt.id, Assumption: rt.assumption, Where: "request body",
				Detail: "the operation takes no body"})
		}
	case len(bytes.TrimSpace(body)) == 0:
		if rb.Value.Required {
			vs = append(vs, &Violation{Operation: rt.id, Assumption: rt.assumption, Where: "request body", Detail: "is missing"})
		}
	default:
		mt := rb.Value.Content.Get(req.Header.Get("Content-Type"))
		if mt == nil {
			vs = append(vs, &Violation{Operation: rt.id, Assumption: rt.assumption, Where: "request header Content-Type",
				Detail: fmt.Sprintf("is %q, want application/json", req.Header.Get("Content-Type"))})
			break
		}
		vs = append(vs, c.checkBody(rt, "request body", mt.Schema, body, rt.assumption)...)
	}
	return vs
}

// bearer is the check of the document's only security scheme: an
// Authorization header "Bearer <key>".
func bearer(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, token, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no Authorization: Bearer <API key> header")
	}
	return nil
}

// requestErrors turns what openapi3filter found into violations.
func (c *Contract) requestErrors(rt *route, err error) []*Violation {
	if err == nil {
		return nil
	}
	var errs []error
	if me, ok := err.(openapi3.MultiError); ok {
		errs = me
	} else {
		errs = []error{err}
	}
	var out []*Violation
	for _, e := range errs {
		v := &Violation{Operation: rt.id, Assumption: rt.assumption, Where: "request", Detail: reason(e)}
		var re *openapi3filter.RequestError
		var se *openapi3filter.SecurityRequirementsError
		switch {
		case errors.As(e, &re) && re.Parameter != nil:
			p := re.Parameter
			v.Where = fmt.Sprintf("request %s parameter %s", p.In, p.Name)
			if p.In == openapi3.ParameterInHeader {
				v.Where = "request header " + p.Name
			}
			if a := extension(p.Extensions, assumptionKey); a != "" {
				v.Assumption = a
			}
		case errors.As(e, &se):
			v.Where, v.Assumption, v.Detail = "request header Authorization", "", "no Authorization: Bearer <API key> header"
		}
		out = append(out, v)
	}
	return out
}

// reason is an error of openapi3filter in a few words, without the values
// that the long form prints.
func reason(err error) string {
	var se *openapi3.SchemaError
	var re *openapi3filter.RequestError
	switch {
	case errors.As(err, &se):
		return firstLine(se.Reason)
	case errors.As(err, &re):
		return firstLine(re.Reason)
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// extension reads a string extension of the document ("" if absent).
func extension(ext map[string]any, key string) string {
	s, _ := ext[key].(string)
	return s
}
