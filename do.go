package payments

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// Do sends a request for an operation the SDK does not type yet (reads,
// lists, the webhook events list) through the same pipeline as every other
// call: authentication, retries, idempotency, the envelope and typed errors.
//
// path is the path below the base URL, starting with "/", with any query
// already encoded; escape each path segment you interpolate with
// url.PathEscape. params, when non-nil, is sent as the JSON body. The
// envelope's data member is decoded into out, when out is non-nil; a success
// envelope without data is accepted. POST and PATCH calls are retried only
// when they carry WithIdempotencyKey; Do never invents one, because it cannot
// know whether the operation honours it.
//
//	var events []map[string]any
//	_, err := client.Do(ctx, http.MethodGet, "/webhooks/events?limit=10", nil, &events)
func (c *Client) Do(ctx context.Context, method, path string, params, out any, opts ...RequestOption) (*Response, error) {
	var v validator
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		v.add("method", "must be GET, POST, PUT, PATCH or DELETE")
	}
	if u, err := url.Parse(path); err != nil || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") ||
		u.Scheme != "" || u.Host != "" || u.Fragment != "" || hasDotSegment(u.Path) ||
		strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		v.add("path", `must be an absolute path such as "/payments/recipients", without "..", spaces or a host`)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	cl := &call{method: method, path: path, body: params, out: out, dataOptional: true}
	if err := c.call(ctx, cl, opts); err != nil {
		return nil, err
	}
	return cl.resp, nil
}

func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
