package paymentstest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// apiRequest is what a handler gets: the request, its body and its path
// parameter.
type apiRequest struct {
	r     *http.Request
	w     http.ResponseWriter
	body  []byte
	param string // {id} or {event_id}, unescaped
	notes []string
	delay time.Duration // of a faultLatency, on top of SetLatency
}

type handlerFunc func(s *Server, rq *apiRequest) *response

// serveHTTP answers one request. Server is an http.Handler, so it can also
// be mounted in a server of your own (without a listener, Close still stops
// webhook delivery). Each request is added to the Requests log before its
// answer is sent (or its connection dropped), so a client that got an answer
// finds its request logged. With withAdminAPI, requests under adminPrefix
// go to the admin API instead; with withDashboard, GET / and requests under
// dashboardPath go to the dashboard.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.admin && isAdminPath(r.URL.EscapedPath()) {
		s.serveAdmin(w, r)
		return
	}
	if s.dash != nil && isDashboardPath(r.URL.EscapedPath()) {
		s.serveDashboard(w, r)
		return
	}
	start := time.Now()
	rec := RequestRecord{
		Method:         r.Method,
		Path:           r.URL.EscapedPath(),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
		At:             s.clock.now(),
	}
	logged := func() { s.record(r.Context(), rec, time.Since(start)) }
	// The Date header is the server's clock, as a real service's would be:
	// clients measure a quote's life against it.
	w.Header().Set("Date", rec.At.UTC().Format(http.TimeFormat))

	fault, faulted := s.faults.take(r.Method, rec.Path)
	if faulted {
		rec.Fault = fault.kind.String()
		switch fault.kind {
		case faultStatus:
			resp := s.differAnswer(r, s.faultResponse(fault))
			rec.StatusCode, rec.Stan = resp.status, resp.stan
			logged()
			resp.write(w, false)
			return
		case faultDrop:
			logged()
			dropConnection(w)
			return
		}
	}
	rq := &apiRequest{r: r, w: w}
	if faulted && fault.kind == faultLatency {
		rq.delay = fault.Latency
	}
	resp, replayed := s.handle(w, rq)
	rec.Notes, rec.Replayed = rq.notes, replayed
	if resp == nil { // the client went away during the latency
		logged()
		return
	}
	rec.Stan = resp.stan
	if faulted && fault.kind == faultDropAfterWork {
		logged()
		dropConnection(w)
		return
	}
	rec.StatusCode = resp.status
	logged()
	s.differAnswer(rq.r, resp).write(w, replayed)
}

// handle runs authentication, routing, idempotency and the operation. It
// returns nil when the client went away before the work was done.
func (s *Server) handle(w http.ResponseWriter, rq *apiRequest) (resp *response, replayed bool) {
	r := rq.r
	if msg, ok := s.authorize(r); !ok {
		return s.fail(http.StatusUnauthorized, payments.CodeUnauthorized, msg).
			withHeader("WWW-Authenticate", `Bearer realm="payments"`), false
	}
	r, bad := s.differRequest(r) // differences.go; r as it is without WithDifferences
	if bad != nil {
		return bad, false
	}
	rq.r = r
	h, param, bad := s.route(r.Method, r.URL.EscapedPath(), false)
	if bad != nil {
		return bad, false
	}
	rq.param = param
	body, bad := s.readBody(w, r, maxBodyBytes, true)
	if bad != nil {
		return bad, false
	}
	rq.body = body

	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		if !s.pause(rq) {
			return s.abandoned(), false
		}
		return s.run(h, rq), false
	}
	if !validIdempotencyKey(key) {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidIdempotencyKey,
			fmt.Sprintf("the Idempotency-Key must be 1 to %d printable ASCII characters", maxIdempotencyKeyLen)), false
	}
	k := idemKey{apiKey: s.apiKeyHash, method: r.Method, path: r.URL.EscapedPath(), key: key}
	outcome, entry := s.idem.begin(k, canonicalHash(body), s.clock.now())
	switch outcome {
	case idemReplay:
		return entry.resp, true
	case idemMismatch:
		return s.fail(http.StatusUnprocessableEntity, payments.CodeIdempotencyKeyReused,
			"this Idempotency-Key was already used with a different request body"), false
	case idemInProgress:
		return s.fail(http.StatusConflict, payments.CodeIdempotencyInProgress,
			"a request with this Idempotency-Key is still being processed; retry shortly"), false
	}
	if !s.pause(rq) {
		s.idem.finish(k, entry, nil)
		return s.abandoned(), false
	}
	resp = s.run(h, rq)
	s.idem.finish(k, entry, resp)
	return resp, false
}

// run calls the operation; a panic in it (a bug of the fake) becomes a 500
// answer instead of a dropped connection.
func (s *Server) run(h handlerFunc, rq *apiRequest) (resp *response) {
	defer func() {
		if v := recover(); v != nil {
			resp = s.internal(fmt.Errorf("panic: %v", v))
		}
	}()
	return h(s, rq)
}

// pause waits for the latency set by SetLatency plus the request's
// faultLatency. It reports false when the request's context ended or the
// server is closing.
func (s *Server) pause(rq *apiRequest) bool {
	d := time.Duration(s.latency.Load()) + rq.delay
	if d <= 0 {
		return true
	}
	s.extendWrite(rq.w, d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-rq.r.Context().Done():
	case <-s.done:
	}
	return false
}

// abandoned is the answer to a request dropped during the latency wait: none
// when the client left, 503 when the server is closing.
func (s *Server) abandoned() *response {
	if s.closed() {
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	}
	return nil
}

func (s *Server) authorize(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return "missing Authorization header: send Authorization: Bearer <API key>", false
	}
	scheme, token, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "the Authorization header must use the Bearer scheme", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(sum[:], s.apiKeyHash[:]) != 1 {
		return "invalid API key", false
	}
	return "", true
}

func (s *Server) record(ctx context.Context, rec RequestRecord, took time.Duration) {
	s.reqs.add(rec)
	if s.logger == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", rec.Method),
		slog.String("path", rec.Path),
		slog.Int("status", rec.StatusCode),
		slog.Duration("duration", took),
	}
	if rec.Stan != "" {
		attrs = append(attrs, slog.String("stan", rec.Stan))
	}
	if rec.IdempotencyKey != "" {
		attrs = append(attrs, slog.String("idempotency_key", rec.IdempotencyKey))
	}
	if rec.Replayed {
		attrs = append(attrs, slog.Bool("replayed", true))
	}
	if rec.Fault != "" {
		attrs = append(attrs, slog.String("fault", rec.Fault))
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "paymentstest: request", attrs...)
}
