package paymentstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// AdminPrefix is the path prefix of the admin API that WithAdminAPI turns
// on. The Payments API has no path under it.
const AdminPrefix = "/_sandbox/"

// Bounds of the admin API's inputs.
const (
	maxAdminBody        = 64 << 10
	maxClockOffset      = 100 * 365 * 24 * time.Hour // how far the admin API may move the clock, in total
	maxClockOffsetText  = "100 years"
	defaultAdminWait    = 10 * time.Second
	maxAdminWait        = 5 * time.Minute
	maxFaultTimes       = 1_000_000
	maxFaultRetryAfter  = 24 * 60 * 60         // seconds
	maxFaultLatencyMS   = 60 * 60 * 1000       // an hour
	codeDeliveryPending = "deliveries_pending" // the wait ended with deliveries still pending
)

var httpMethodPattern = regexp.MustCompile(`^[A-Z]{1,16}$`)

// isAdminPath reports whether an escaped path is under AdminPrefix.
func isAdminPath(path string) bool {
	return path == strings.TrimSuffix(AdminPrefix, "/") || strings.HasPrefix(path, AdminPrefix)
}

// serveAdmin answers a request to the admin API. Unlike the service's
// requests it is never faulted, slowed down, subject to Idempotency-Key or
// added to the Requests log; WithLogger logs it as an admin request.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	resp := s.handleAdmin(w, r)
	status, stan := 0, ""
	if resp != nil {
		status, stan = resp.status, resp.stan
	}
	if s.logger != nil {
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.EscapedPath()),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
		}
		if stan != "" {
			attrs = append(attrs, slog.String("stan", stan))
		}
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "paymentstest: admin request", attrs...)
	}
	if resp != nil { // nil: the client went away while waiting
		resp.write(w, false)
	}
}

func (s *Server) handleAdmin(w http.ResponseWriter, r *http.Request) *response {
	if msg, ok := s.authorize(r); !ok {
		return s.fail(http.StatusUnauthorized, CodeUnauthorized, msg).
			withHeader("WWW-Authenticate", `Bearer realm="payments"`)
	}
	h, param, bad := s.adminRoute(r.Method, r.URL.EscapedPath())
	if bad != nil {
		return bad
	}
	// The Content-Type is not checked, so that curl -d works as it is.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdminBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return s.fail(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
				fmt.Sprintf("the body is larger than %d bytes", maxAdminBody))
		}
		return s.fail(http.StatusBadRequest, CodeInvalidJSON, "reading the body failed")
	}
	return s.run(h, &apiRequest{r: r, body: body, param: param})
}

// adminRoute finds the admin operation for a method and an escaped path.
func (s *Server) adminRoute(method, path string) (handlerFunc, string, *response) {
	seg := strings.Split(strings.TrimPrefix(path, AdminPrefix), "/")
	var (
		routes map[string]handlerFunc
		param  string
	)
	switch {
	case len(seg) == 1 && seg[0] == "clock":
		routes = map[string]handlerFunc{http.MethodGet: (*Server).adminClock}
	case len(seg) == 2 && seg[0] == "clock" && seg[1] == "advance":
		routes = map[string]handlerFunc{http.MethodPost: (*Server).adminAdvance}
	case len(seg) == 3 && seg[0] == "virtual-accounts" && seg[1] != "" && seg[2] == "incoming-payments":
		routes = map[string]handlerFunc{http.MethodPost: (*Server).adminIncomingPayment}
		param = seg[1]
	case len(seg) == 1 && seg[0] == "faults":
		routes = map[string]handlerFunc{
			http.MethodGet:    (*Server).adminFaults,
			http.MethodPost:   (*Server).adminInjectFault,
			http.MethodDelete: (*Server).adminClearFaults,
		}
	case len(seg) == 1 && seg[0] == "deliveries":
		routes = map[string]handlerFunc{http.MethodGet: (*Server).adminDeliveries}
	case len(seg) == 2 && seg[0] == "deliveries" && seg[1] == "wait":
		routes = map[string]handlerFunc{http.MethodPost: (*Server).adminWaitDeliveries}
	default:
		return nil, "", s.fail(http.StatusNotFound, CodeNotFound, "no such admin endpoint: "+path)
	}
	h, ok := routes[method]
	if !ok {
		allowed := make([]string, 0, len(routes))
		for m := range routes {
			allowed = append(allowed, m)
		}
		slices.Sort(allowed)
		allow := strings.Join(allowed, ", ")
		return nil, "", s.fail(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			fmt.Sprintf("%s is not allowed on %s; use %s", method, path, allow)).withHeader("Allow", allow)
	}
	if param != "" {
		p, err := url.PathUnescape(param)
		if err != nil {
			return nil, "", s.fail(http.StatusNotFound, CodeNotFound, "no such admin endpoint: "+path)
		}
		param = p
	}
	return h, param, nil
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
		return nil, nil, s.fail(http.StatusBadRequest, CodeInvalidJSON, err.Error())
	}
	return o, p, nil
}

// adminOK answers 200 with v as data.
func (s *Server) adminOK(message string, v any) *response {
	data, err := json.Marshal(v)
	if err != nil {
		return s.internal(err)
	}
	return s.ok(http.StatusOK, message, data)
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
