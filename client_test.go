package payments_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
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

const recipientJSON = `{
	"id": "` + recipientUUID + `",
	"merchant_id": "` + merchantUUID + `",
	"account_number": "0123456789",
	"account_name": "Ada Okafor",
	"account_type": "individual",
	"is_internal_account": false,
	"account_currency": "NGN",
	"account_bank_name": "First Bank",
	"account_bank_code": "011",
	"account_country_code": "NG",
	"account_country": "Nigeria",
	"identification": {"identification_type": "passport"},
	"limit": "250000.00",
	"payment_details": {"swift_code": "FBNINGLA"},
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:05:00Z"
}`

const paymentJSON = `{
	"id": "` + paymentUUID + `",
	"reference": "order-1042",
	"status": "pending",
	"amount": "15000.50",
	"currency": "NGN",
	"description": "Invoice 1042",
	"type": "transfer",
	"sub_type": "domestic",
	"category": "payout",
	"transaction_date": "2025-03-01T10:00:00Z",
	"tags": "invoice,march",
	"is_reversed": false,
	"is_completed": false,
	"channel": "api",
	"notes": "",
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:00:00Z",
	"quote": {
		"quote_id": "` + quoteUUID + `",
		"amount": "15000.50",
		"fee": "25.00",
		"exchange_rate": "1",
		"total_amount": "15025.50",
		"currency": "NGN",
		"expires_at": "2025-03-01T10:05:00Z"
	}
}`

const confirmedPaymentJSON = `{
	"id": "` + paymentUUID + `",
	"reference": "order-1042",
	"status": "completed",
	"amount": "15000.50",
	"currency": "NGN",
	"is_completed": true,
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:01:00Z"
}`

const virtualAccountJSON = `{
	"id": "` + vaUUID + `",
	"currency": "NGN",
	"account_number": "9900112233",
	"account_name": "Acme Stores",
	"bank_name": "Wema Bank",
	"is_active": true,
	"created_at": "2025-03-01T10:00:00Z"
}`

// okEnvelope wraps data in a success envelope.
func okEnvelope(data string) string {
	return `{"success":true,"message":"Request successful","stan":"` + stanUUID + `","data":` + data + `}`
}

// jsonResponder answers with status and body as application/json.
func jsonResponder(status int, body string) httpmock.Responder {
	return typedResponder(status, "application/json", body)
}

func typedResponder(status int, contentType, body string) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, body)
		if contentType != "" {
			resp.Header.Set("Content-Type", contentType)
		}
		return resp, nil
	}
}

// withHeader adds a response header to every answer of r.
func withHeader(r httpmock.Responder, name, value string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		resp, err := r(req)
		if resp != nil {
			resp.Header.Set(name, value)
		}
		return resp, err
	}
}

// sequence answers with each responder in turn, then keeps using the last.
func sequence(rs ...httpmock.Responder) httpmock.Responder {
	var n atomic.Int64
	return func(req *http.Request) (*http.Response, error) {
		i := int(n.Add(1)) - 1
		if i >= len(rs) {
			i = len(rs) - 1
		}
		return rs[i](req)
	}
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
		payments.WithRetryWait(time.Millisecond, 5*time.Millisecond),
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

// calls is the number of attempts the transport saw, recorded or not.
func (h *harness) calls() int { return h.mt.GetTotalCallCount() }

func validRecipientParams() *payments.RecipientCreateParams {
	return &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
	}
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
	assert.JSONEq(t, `[{"id":"e1","event":"payment.completed"},{"id":"e2","event":"brand.new"}]`, string(resp.RawData))

	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/webhooks/events", reqs[0].Path)
	assert.Equal(t, "limit=10&after=e0", reqs[0].RawQuery)
	assert.False(t, reqs[0].HasBody)
	assert.Empty(t, reqs[0].Header.Get("Content-Type"))
	assert.Empty(t, reqs[0].Header.Get("Idempotency-Key"))
	assert.Equal(t, "Bearer "+harnessKey, reqs[0].Header.Get("Authorization"))
}

func TestDoAcceptsEnvelopeWithoutData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodDelete, "/payments/recipients/"+recipientUUID,
		jsonResponder(200, `{"success":true,"message":"deleted","stan":"`+stanUUID+`"}`))
	resp, err := h.client.Do(context.Background(), http.MethodDelete, "/payments/recipients/"+recipientUUID, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "deleted", resp.Message)
	assert.Empty(t, resp.RawData)
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
	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.JSONEq(t, `{"from":"2025-03-01","to":"2025-03-31"}`, string(reqs[0].Body))
	assert.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
	assert.Equal(t, "report-2025-03", reqs[0].Header.Get("Idempotency-Key"))
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

func TestRequestOptionsAreChecked(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name  string
		opt   payments.RequestOption
		field string
	}{
		{"owned Authorization", payments.WithHeader("Authorization", "Bearer other"), "header Authorization"},
		{"owned lower-case", payments.WithHeader("authorization", "Bearer other"), "header Authorization"},
		{"owned Idempotency-Key", payments.WithHeader("Idempotency-Key", "k"), "header Idempotency-Key"},
		{"owned Content-Type", payments.WithHeader("Content-Type", "text/plain"), "header Content-Type"},
		{"owned User-Agent", payments.WithHeader("User-Agent", "x"), "header User-Agent"},
		{"owned Host", payments.WithHeader("Host", "evil.example"), "header Host"},
		{"header injection", payments.WithHeader("X-Trace", "a\r\nAuthorization: Bearer x"), "header X-Trace"},
		{"bad header name", payments.WithHeader("X Trace", "a"), "header X Trace"},
		{"key with space", payments.WithIdempotencyKey("order 1"), "Idempotency-Key"},
		{"key with newline", payments.WithIdempotencyKey("order\n1"), "Idempotency-Key"},
		{"key too long", payments.WithIdempotencyKey(strings.Repeat("k", 256)), "Idempotency-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), tc.opt)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr)
			assert.True(t, verr.Has(tc.field), verr.Error())
		})
	}
	assert.Zero(t, h.calls())
}

func TestEnvelopeDataIsDecodedIntoTypedResources(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, recipientUUID, r.ID)
	assert.Equal(t, merchantUUID, r.MerchantID)
	assert.Equal(t, payments.AccountTypeIndividual, r.AccountType)
	assert.Equal(t, "Nigeria", r.AccountCountry)
	require.NotNil(t, r.Limit)
	assert.Equal(t, "250000", r.Limit.String())
	require.NotNil(t, r.Identification)
	assert.Equal(t, payments.IdentificationPassport, r.Identification.Type)
	require.NotNil(t, r.PaymentDetails)
	assert.Equal(t, "FBNINGLA", r.PaymentDetails.SwiftCode)
	assert.Equal(t, time.Date(2025, 3, 1, 10, 5, 0, 0, time.UTC), r.UpdatedAt)
	assert.Equal(t, 201, r.LastResponse().StatusCode)

	var roundTrip map[string]any
	require.NoError(t, json.Unmarshal(r.RawJSON(), &roundTrip))
	assert.Equal(t, "Nigeria", roundTrip["account_country"])
}

// poolRun makes calls calls from 16 goroutines through one Client with the
// default transport, failing every failEvery-th with 503 on every attempt
// (0: none), and returns how many connections the server accepted.
func poolRun(tb testing.TB, calls, failEvery int) int64 {
	tb.Helper()
	var newConns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Test-Fail") != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"message":"ok","stan":"s","data":{}}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := payments.NewClient("sk_test_pool", payments.WithBaseURL(srv.URL),
		payments.WithMaxRetries(1), payments.WithRetryWait(time.Millisecond, 2*time.Millisecond))
	require.NoError(tb, err)
	defer c.Close()

	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(calls) {
					return
				}
				var opts []payments.RequestOption
				if failEvery > 0 && n%int64(failEvery) == 0 {
					opts = append(opts, payments.WithHeader("X-Test-Fail", "1"))
				}
				_, err := c.Do(context.Background(), http.MethodGet, "/pool", nil, nil, opts...)
				if failEvery > 0 && n%int64(failEvery) == 0 {
					var apiErr *payments.APIError
					if assert.ErrorAs(tb, err, &apiErr) {
						assert.Equal(tb, http.StatusServiceUnavailable, apiErr.StatusCode)
					}
				} else {
					assert.NoError(tb, err)
				}
			}
		}()
	}
	wg.Wait()
	return newConns.Load()
}

// TestFailedCallsKeepThePool: go-retryablehttp closes the idle connections of
// its client whenever a call ends in an error. With a shared pool that made
// a burst of failures multiply new connections during an outage; the SDK
// hides the transport's CloseIdleConnections from it.
func TestFailedCallsKeepThePool(t *testing.T) {
	healthy := poolRun(t, 800, 0)
	failing := poolRun(t, 800, 10)
	t.Logf("new connections: %d without failures, %d with 1 call in 10 failing", healthy, failing)
	assert.LessOrEqual(t, failing, 2*max(healthy, 16), "failed calls must not empty the shared pool")
}

// TestCloseClosesIdleConnections: Client.Close empties the pool of the
// transport NewClient made, and the Client still works afterwards.
func TestCloseClosesIdleConnections(t *testing.T) {
	var newConns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"success":true,"data":{}}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := payments.NewClient("sk_test_pool", payments.WithBaseURL(srv.URL))
	require.NoError(t, err)
	for range 3 {
		_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, newConns.Load(), "one kept-alive connection")
	require.NoError(t, c.Close())
	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 2, newConns.Load(), "Close dropped the idle connection")
}
