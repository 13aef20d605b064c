package paymentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	payments "github.com/paymentsapi/payments-go"
)

// fieldProblem is one entry of the envelope's "errors" member.
type fieldProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// envelopeJSON is every response body the server sends.
type envelopeJSON struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Stan    string          `json:"stan"`
	Code    string          `json:"code,omitempty"`
	Errors  []fieldProblem  `json:"errors,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// response is an answer before it is written, so that it can be stored for
// idempotent replay and written byte for byte again.
type response struct {
	status int
	header http.Header
	body   []byte
	stan   string
	code   string
}

func (r *response) write(w http.ResponseWriter, replayed bool) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = append([]string(nil), v...)
	}
	if h.Get("Content-Type") == "" { // an HTML error of WithDifferences has its own
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(r.body)))
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
}

// ids makes identifiers. uuid.NewRandom only fails when the system's random
// source does; the counter keeps ids unique even then.
type ids struct{ n atomic.Uint64 }

func (g *ids) uuid() string {
	if u, err := uuid.NewRandom(); err == nil {
		return u.String()
	}
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(strconv.FormatUint(g.n.Add(1), 10))).String()
}

func newEnvelope(e envelopeJSON, status int, stan string) *response {
	e.Stan = stan
	body, err := json.Marshal(e)
	if err != nil { // cannot happen with the server's own types
		status = http.StatusInternalServerError
		e = envelopeJSON{Message: "encoding the response failed", Stan: stan, Code: string(payments.CodeInternal)}
		body, _ = json.Marshal(e)
	}
	return &response{status: status, body: body, stan: stan, code: e.Code}
}

// ok answers with a success envelope around data, which must already be
// JSON.
func (s *Server) ok(status int, message string, data json.RawMessage) *response {
	return newEnvelope(envelopeJSON{Success: true, Message: message, Data: data}, status, s.ids.uuid())
}

// fail answers with an error envelope.
func (s *Server) fail(status int, code payments.ErrorCode, message string, problems ...fieldProblem) *response {
	return newEnvelope(envelopeJSON{Message: message, Code: string(code), Errors: problems}, status, s.ids.uuid())
}

// invalid answers 422 validation_failed naming every bad field.
func (s *Server) invalid(p problems) *response {
	names := make([]string, 0, len(p))
	for _, f := range p {
		names = append(names, f.Field)
	}
	return s.fail(http.StatusUnprocessableEntity, payments.CodeValidationFailed,
		"Validation failed: "+strings.Join(names, ", "), p...)
}

func (s *Server) notFound(what string) *response {
	return s.fail(http.StatusNotFound, payments.CodeNotFound, what+" not found")
}

func (s *Server) internal(err error) *response {
	return s.fail(http.StatusInternalServerError, payments.CodeInternal, fmt.Sprintf("internal error in paymentstest: %v", err))
}

// withHeader adds a header to a response and returns it.
func (r *response) withHeader(name, value string) *response {
	if r.header == nil {
		r.header = make(http.Header)
	}
	r.header.Set(name, value)
	return r
}

// retryAfterSeconds renders d as a Retry-After value, rounding up.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// codeForStatus turns an HTTP status into a snake_case code:
// 503 → "service_unavailable".
func codeForStatus(status int) string {
	t := http.StatusText(status)
	if t == "" {
		return "http_" + strconv.Itoa(status)
	}
	return strings.ReplaceAll(strings.ToLower(strings.NewReplacer("'", "", "-", " ").Replace(t)), " ", "_")
}
