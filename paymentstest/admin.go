package paymentstest

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// adminPrefix is the path prefix of the admin API that withAdminAPI turns
// on. The Payments API has no path under it.
const adminPrefix = "/_sandbox/"

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

// isAdminPath reports whether an escaped path is under adminPrefix.
func isAdminPath(path string) bool {
	return path == strings.TrimSuffix(adminPrefix, "/") || strings.HasPrefix(path, adminPrefix)
}

// serveAdmin answers a request to the admin API. Unlike the service's
// requests it is never faulted, slowed down, subject to Idempotency-Key or
// added to the Requests log; withLogger logs it as an admin request.
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
		return s.fail(http.StatusUnauthorized, payments.CodeUnauthorized, msg).
			withHeader("WWW-Authenticate", `Bearer realm="payments"`)
	}
	h, param, bad := s.route(r.Method, r.URL.EscapedPath(), true)
	if bad != nil {
		return bad
	}
	body, bad := s.readBody(w, r, maxAdminBody, false)
	if bad != nil {
		return bad
	}
	return s.run(h, &apiRequest{r: r, w: w, body: body, param: param})
}

// adminOK answers 200 with v as data.
func (s *Server) adminOK(message string, v any) *response {
	data, err := json.Marshal(v)
	if err != nil {
		return s.internal(err)
	}
	return s.ok(http.StatusOK, message, data)
}
