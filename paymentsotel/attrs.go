package paymentsotel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// target is where an attempt goes, in the words of the HTTP semantic
// conventions, with no id in any of it.
type target struct {
	address  string // server.address
	port     int    // server.port
	template string // url.template, or "" when there is none (Client.Do)
	path     string // the path of url.full: the template, or the path scrubbed
}

// newTarget describes u, the URL of an attempt of an operation whose path
// template is tmpl ("" for Client.Do).
func newTarget(u *url.URL, tmpl string) target {
	t := target{address: u.Hostname(), port: portOf(u)}
	if tmpl != "" {
		t.template = scrubPath(basePrefix(u.EscapedPath(), tmpl)) + tmpl
		t.path = t.template
	} else {
		t.path = scrubPath(u.EscapedPath())
	}
	return t
}

// fullURL is url.full: u's scheme and host (no user info) and the target's
// path (no query, no fragment).
func (t target) fullURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + t.path
}

func (t target) spanName(method string) string {
	if t.template == "" {
		return method
	}
	return method + " " + t.template
}

func portOf(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

// basePrefix returns the part of path that comes from the client's base URL
// ("/v1" for a base URL of https://host/v1; newTarget scrubs it like a path
// of Client.Do, in case it holds an id): path is the prefix followed by
// tmpl with its placeholders filled in, one escaped segment each. It returns
// "" when path does not have that shape.
func basePrefix(path, tmpl string) string {
	// Both are walked from their end, a segment at a time; tmpl starts
	// with "/".
	for tmpl != "" {
		ti, pi := strings.LastIndexByte(tmpl, '/'), strings.LastIndexByte(path, '/')
		if ti < 0 || pi < 0 {
			return ""
		}
		ts, ps := tmpl[ti+1:], path[pi+1:]
		isParam := strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}")
		if !isParam && ts != ps {
			return ""
		}
		tmpl, path = tmpl[:ti], path[:pi]
	}
	return path
}

// scrubPath replaces by "{id}" each segment of a path that may be an id: one
// that holds a digit (except an API version such as "v1") or is longer than
// 24 characters.
func scrubPath(path string) string {
	if path == "" {
		return ""
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if len(s) > 24 || (strings.ContainsAny(s, "0123456789") && !isVersion(s)) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

func isVersion(s string) bool {
	if len(s) < 2 || len(s) > 4 || s[0] != 'v' {
		return false
	}
	_, err := strconv.ParseUint(s[1:], 10, 8)
	return err == nil
}

// methodOf returns the http.request.method of a request's method: the method
// when the semantic conventions know it, else "_OTHER" and the method as
// http.request.method_original.
func methodOf(m string) (method, original string) {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch:
		return m, ""
	}
	return "_OTHER", m
}

// classify returns the error.type of err ("" for nil), and whether err is
// the context's cancellation, which is not an error.
func classify(err error) (errType string, cancelled bool) {
	if err == nil {
		return "", false
	}
	if errors.Is(err, context.Canceled) {
		return "", true
	}
	var (
		apiErr    *payments.APIError
		invalid   *payments.ValidationError
		malformed *payments.MalformedResponseError
		netErr    net.Error
		dnsErr    *net.DNSError
		opErr     *net.OpError
		certErr   *tls.CertificateVerificationError
		recordErr tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 300:
		return strconv.Itoa(apiErr.StatusCode), false
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout", false
	case errors.As(err, &invalid):
		return "validation_error", false
	case errors.As(err, &malformed):
		return "malformed_response", false
	case errors.As(err, &apiErr):
		return "api_error", false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection_closed", false
	case errors.As(err, &dnsErr):
		return "dns_error", false
	case errors.As(err, &certErr), errors.As(err, &recordErr):
		return "tls_error", false
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "connect_error", false
	case errors.As(err, &opErr):
		return "connection_closed", false
	}
	// Else the Go type of the innermost error: low-cardinality, and it says
	// nothing that the error's text might.
	for {
		var inner error
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			inner = x.Unwrap()
		case interface{ Unwrap() []error }: // *payments.TransportError: its cause first
			if errs := x.Unwrap(); len(errs) > 0 {
				inner = errs[0]
			}
		}
		if inner == nil {
			return fmt.Sprintf("%T", err), false
		}
		err = inner
	}
}
