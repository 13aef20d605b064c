package payments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// Shared fixtures of the external tests. The names are long on purpose: other
// test files of this package are written by other people.
const (
	harnessKey  = "sk_test_Zq7Xw2Lp9Rt4Vb8Nm3Kc"
	harnessBase = "https://api.payments.test"

	recipientUUID = "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11"
	merchantUUID  = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
	paymentUUID   = "9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c"
	quoteUUID     = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
	vaUUID        = "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f"
	stanUUID      = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

var errConnReset = errors.New("read tcp 10.0.0.1:443: connection reset by peer")

func errorEnvelope(message string) string {
	return `{"success":false,"message":"` + message + `","stan":"` + stanUUID + `"}`
}

// okEnvelope wraps data in a success envelope.
func okEnvelope(data string) string {
	return `{"success":true,"message":"Request successful","stan":"` + stanUUID + `","data":` + data + `}`
}

// jsonResponder answers with status and body as application/json.
func jsonResponder(status int, body string) httpmock.Responder {
	return typedResponder(status, "application/json", body)
}

// typedResponder answers with status and body as contentType.
func typedResponder(status int, contentType, body string) httpmock.Responder {
	return httpmock.NewStringResponder(status, body).HeaderSet(http.Header{"Content-Type": {contentType}})
}

// sentRequest is what one attempt put on the wire.
type sentRequest struct {
	Method   string
	Path     string // escaped, as sent
	RawQuery string
	Header   http.Header
	Body     []byte
	HasBody  bool
}

// harness is a Client whose transport, under the retry layer, is an httpmock
// MockTransport that records every attempt.
type harness struct {
	mt     *httpmock.MockTransport
	client *payments.Client

	mu   sync.Mutex
	sent []sentRequest
}

// newHarness returns a client on a mock transport with millisecond retry
// waits. Options given here are applied after the defaults.
func newHarness(t testing.TB, opts ...payments.Option) *harness {
	t.Helper()
	h := &harness{mt: httpmock.NewMockTransport()}
	h.mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL)
		return httpmock.NewStringResponse(http.StatusTeapot, "no responder"), nil
	})
	all := append([]payments.Option{
		payments.WithBaseURL(harnessBase),
		payments.WithHTTPClient(&http.Client{Transport: h.mt}),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond}),
	}, opts...)
	c, err := payments.NewClient(harnessKey, all...)
	require.NoError(t, err)
	h.client = c
	return h
}

// on registers r for method and path (escaped, below the base URL); every
// attempt that reaches it is recorded.
func (h *harness) on(method, path string, r httpmock.Responder) {
	h.mt.RegisterResponder(method, harnessBase+path, h.record(r))
}

func (h *harness) record(r httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		s := sentRequest{
			Method:   req.Method,
			Path:     req.URL.EscapedPath(),
			RawQuery: req.URL.RawQuery,
			Header:   req.Header.Clone(),
		}
		if req.Body != nil && req.Body != http.NoBody {
			b, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			s.Body, s.HasBody = b, true
			req.Body = io.NopCloser(bytes.NewReader(b)) // for a responder that reads it
		}
		h.mu.Lock()
		h.sent = append(h.sent, s)
		h.mu.Unlock()
		return r(req)
	}
}

// requests returns the recorded attempts in order.
func (h *harness) requests() []sentRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sentRequest(nil), h.sent...)
}

// onlyRequest returns the one attempt h recorded; the test fails unless
// there was exactly one.
func (h *harness) onlyRequest(t *testing.T) sentRequest {
	t.Helper()
	reqs := h.requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

// calls is the number of attempts the transport saw, recorded or not.
func (h *harness) calls() int { return h.mt.GetTotalCallCount() }

// uaPattern is the SDK's User-Agent: product, version, Go version, platform.
var uaPattern = regexp.MustCompile(`^payments-go/` + regexp.QuoteMeta(payments.Version) +
	` \(` + regexp.QuoteMeta(runtime.Version()) + `; ` + runtime.GOOS + `/` + runtime.GOARCH + `\)$`)

// headerNames returns the sorted names of h.
func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// assertSDKHeaders checks the headers every request carries, and that no
// other header was sent. It returns the Idempotency-Key ("" when absent).
func assertSDKHeaders(t *testing.T, req sentRequest, withBody, withKey bool) string {
	t.Helper()
	want := []string{"Accept", "Authorization", "User-Agent"}
	if withBody {
		want = append(want, "Content-Type")
	}
	if withKey {
		want = append(want, "Idempotency-Key")
	}
	sort.Strings(want)
	assert.Equal(t, want, headerNames(req.Header))
	assert.Equal(t, []string{"Bearer " + harnessKey}, req.Header.Values("Authorization"))
	assert.Equal(t, []string{"application/json"}, req.Header.Values("Accept"))
	assert.Regexp(t, uaPattern, req.Header.Get("User-Agent"))
	if withBody {
		assert.Equal(t, []string{"application/json"}, req.Header.Values("Content-Type"))
	}
	return req.Header.Get("Idempotency-Key")
}

// assertRandomUUIDKey checks that key is a version-4 (random) UUID.
func assertRandomUUIDKey(t *testing.T, key string) {
	t.Helper()
	u, err := uuid.Parse(key)
	require.NoError(t, err, "Idempotency-Key %q", key)
	assert.Equal(t, uuid.Version(4), u.Version())
	assert.Equal(t, key, u.String(), "canonical lower-case form")
}

// assertKeyedPost checks that req is a POST to path with a JSON body, the
// SDK's headers and a random Idempotency-Key of its own, and returns the key.
func assertKeyedPost(t *testing.T, req sentRequest, path string) string {
	t.Helper()
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, path, req.Path)
	key := assertSDKHeaders(t, req, true, true)
	assertRandomUUIDKey(t, key)
	return key
}

func mustDecimal(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func amountPtr(s string) *payments.Amount { return &payments.Amount{Decimal: mustDecimal(s)} }

// printedForms prints v every way a careless caller might: fmt's verbs, and
// slog's text and JSON handlers, as a whole attribute.
func printedForms(t *testing.T, v any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out[verb] = fmt.Sprintf(verb, v)
	}
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("value", "v", v)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("value", "v", v)
	out["slog text"], out["slog json"] = text.String(), js.String()
	require.NotContains(t, out["slog json"], "!ERROR", "LogValue must resolve")
	return out
}

func TestClientServicesAreWired(t *testing.T) {
	h := newHarness(t)
	assert.NotNil(t, h.client.Recipients)
	assert.NotNil(t, h.client.Payments)
	assert.NotNil(t, h.client.VirtualAccounts)
	assert.NotNil(t, h.client.Webhooks)
}

func TestBaseURLPathPrefixIsKept(t *testing.T) {
	mt := httpmock.NewMockTransport()
	var got string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		got = req.URL.String()
		return jsonResponder(201, okEnvelope(recipientJSON))(req)
	})
	c, err := payments.NewClient(harnessKey,
		payments.WithBaseURL("https://api.payments.test/v1/"),
		payments.WithHTTPClient(&http.Client{Transport: mt}))
	require.NoError(t, err)
	_, err = c.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, "https://api.payments.test/v1/payments/recipients", got)
}

func TestDoGetDecodesDataAndSendsNoBodyOrKey(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", jsonResponder(200,
		okEnvelope(`[{"id":"e1","event":"payment.completed"},{"id":"e2","event":"brand.new"}]`)))

	var events []struct {
		ID    string             `json:"id"`
		Event payments.EventType `json:"event"`
	}
	resp, err := h.client.Do(context.Background(), http.MethodGet, "/webhooks/events?limit=10&after=e0", nil, &events)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, payments.EventType("brand.new"), events[1].Event)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, stanUUID, resp.Stan)
	assert.Equal(t, "Request successful", resp.Message)
	assert.Equal(t, 1, resp.Attempts)
	assert.Empty(t, resp.IdempotencyKey)
	assert.Contains(t, string(resp.Body), `"data":[{"id":"e1","event":"payment.completed"},{"id":"e2","event":"brand.new"}]`)

	req := h.onlyRequest(t)
	assert.Equal(t, "/webhooks/events", req.Path)
	assert.Equal(t, "limit=10&after=e0", req.RawQuery)
	assert.False(t, req.HasBody)
	assert.Empty(t, req.Header.Get("Content-Type"))
	assert.Empty(t, req.Header.Get("Idempotency-Key"))
	assert.Equal(t, "Bearer "+harnessKey, req.Header.Get("Authorization"))
}

func TestDoAcceptsEnvelopeWithoutData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodDelete, "/payments/recipients/"+recipientUUID,
		jsonResponder(200, `{"success":true,"message":"deleted","stan":"`+stanUUID+`"}`))
	resp, err := h.client.Do(context.Background(), http.MethodDelete, "/payments/recipients/"+recipientUUID, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "deleted", resp.Message)
	assert.NotContains(t, string(resp.Body), `"data"`)
}

func TestDoPostSendsParamsAsJSON(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/reports", jsonResponder(200, okEnvelope(`{"id":"r1"}`)))
	var out map[string]string
	_, err := h.client.Do(context.Background(), http.MethodPost, "/reports",
		map[string]any{"from": "2025-03-01", "to": "2025-03-31"}, &out,
		payments.WithIdempotencyKey("report-2025-03"))
	require.NoError(t, err)
	assert.Equal(t, "r1", out["id"])
	req := h.onlyRequest(t)
	assert.JSONEq(t, `{"from":"2025-03-01","to":"2025-03-31"}`, string(req.Body))
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	assert.Equal(t, "report-2025-03", req.Header.Get("Idempotency-Key"))
}

func TestDoRefusesBadMethodsAndPaths(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, method, path, field string
	}{
		{"method", "TRACE", "/x", "method"},
		{"relative", http.MethodGet, "payments/recipients", "path"},
		{"dot-dot", http.MethodGet, "/payments/../admin", "path"},
		{"dot", http.MethodGet, "/payments/./recipients", "path"},
		{"scheme-relative host", http.MethodGet, "//evil.example/x", "path"},
		{"absolute URL", http.MethodGet, "https://evil.example/x", "path"},
		{"space", http.MethodGet, "/payments/recipients /x", "path"},
		{"newline", http.MethodGet, "/payments\n/x", "path"},
		{"fragment", http.MethodGet, "/payments#x", "path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.client.Do(context.Background(), tc.method, tc.path, nil, nil)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr)
			assert.True(t, verr.Has(tc.field), verr.Error())
		})
	}
	assert.Zero(t, h.calls())
}

func TestDoPostWithoutKeyIsNotRetried(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/reports", jsonResponder(503, `{"success":false,"message":"busy"}`))
	_, err := h.client.Do(context.Background(), http.MethodPost, "/reports", map[string]int{"n": 1}, nil)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 1, apiErr.Attempts)
	assert.Equal(t, 1, h.calls())
}

func TestDoOutMustMatchData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/x", jsonResponder(200, okEnvelope(`"a string"`)))
	var out struct{ ID string }
	_, err := h.client.Do(context.Background(), http.MethodGet, "/x", nil, &out)
	var merr *payments.MalformedResponseError
	require.ErrorAs(t, err, &merr)
	assert.Contains(t, merr.Error(), "data does not match")
}

// TestRedirectsAreNeverFollowed: whatever *http.Client the caller gives, a
// 3xx answers the call as an *APIError after one request: the token never
// follows a redirect to plain http, and a redirect loop costs one request.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	for name, location := range map[string]string{
		"to plain http":   "http://api.payments.test/payments/initiate",
		"to another host": "https://evil.example/steal",
		"loop":            harnessBase + "/payments/initiate",
	} {
		t.Run(name, func(t *testing.T) {
			mt := httpmock.NewMockTransport()
			mt.RegisterNoResponder(httpmock.NewStringResponder(http.StatusTemporaryRedirect, "").
				HeaderSet(http.Header{"Location": {location}}))
			c, err := payments.NewClient(harnessKey, payments.WithBaseURL(harnessBase),
				// The caller's client has net/http's default policy: follow 10 redirects.
				payments.WithHTTPClient(&http.Client{Transport: mt}))
			require.NoError(t, err)
			_, err = c.Payments.Initiate(context.Background(), validInitiateParams())
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusTemporaryRedirect, apiErr.StatusCode)
			assert.Equal(t, 1, mt.GetTotalCallCount(), "one request, no redirect followed")
		})
	}
}

func TestClientNeverPrintsItsKey(t *testing.T) {
	const key = "sk_live_Pr1ntMeN0t"
	c, err := payments.NewClient(key, payments.WithBaseURL("https://api.payments.test"))
	require.NoError(t, err)
	forms := printedForms(t, c)
	for how, s := range forms {
		assert.NotContains(t, s, key, how)
	}
	assert.Equal(t, "payments.Client(https://api.payments.test)", fmt.Sprint(c))
	assert.Contains(t, forms["slog text"], `v=payments.Client(https://api.payments.test)`, "slog's text handler prints it with Format")
	assert.Contains(t, forms["slog json"], `"v":"payments.Client(https://api.payments.test)"`, "and its JSON handler with LogValue")
}

// A transport error never repeats the request's query string, which may
// carry personal data: net/http's own text names the whole URL, the
// TransportError and the log line the path only.
func TestTransportErrorOmitsTheQuery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	var logs bytes.Buffer
	c, err := payments.NewClient("sk_test_key", payments.WithBaseURL("http://"+addr), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}),
		payments.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), http.MethodGet, "/payments/recipients?email=ada.okafor@example.com&name=Ada+Okafor", nil, nil)
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.Equal(t, "/payments/recipients", terr.Path)
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), logs.String()} {
		assert.NotContains(t, text, "ada.okafor")
		assert.NotContains(t, text, "Okafor")
	}
	assert.Contains(t, err.Error(), "connection refused")
}
