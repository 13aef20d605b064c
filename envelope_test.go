package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestUnknownEnumValuesPassThrough(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(
		`{"id":"p","reference":"r","status":"pending","status":"settled_partially","amount":"1","currency":"NGN"}`)))
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(
		`{"id":"`+recipientUUID+`","account_type":"sole_trader","identification":{"identification_type":"voters_card"}}`)))

	p, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatus("settled_partially"), p.Status)

	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, payments.AccountType("sole_trader"), r.AccountType)
	assert.Equal(t, payments.IdentificationType("voters_card"), r.Identification.Type)
}

func TestUnknownFieldsAreKeptInRawJSON(t *testing.T) {
	data := `{"id":"` + vaUUID + `","currency":"NGN","account_number":"9900112233","is_active":true,
		"provider":{"name":"wema","tier":2},"expires_on":"2026-01-01","labels":["a","b"]}`
	h := newHarness(t)
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200,
		`{"success":true,"message":"Created","stan":"`+stanUUID+`","data":`+data+`,"request_cost":3,"trace":{"region":"eu"}}`))

	va, err := h.client.VirtualAccounts.Create(context.Background(), validVirtualAccountParams())
	require.NoError(t, err)
	assert.Equal(t, vaUUID, va.ID)
	assert.JSONEq(t, data, string(va.RawJSON()))
	assert.Equal(t, data, string(va.RawJSON()), "byte for byte as received")
	assert.Contains(t, string(va.LastResponse().Body), `"data":`+data, "the envelope as received")

	var extra struct {
		Provider struct {
			Name string `json:"name"`
			Tier int    `json:"tier"`
		} `json:"provider"`
	}
	require.NoError(t, json.Unmarshal(va.RawJSON(), &extra))
	assert.Equal(t, "wema", extra.Provider.Name)
}

func TestPaymentRawJSONKeepsUnknownFieldsAndQuote(t *testing.T) {
	data := `{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN","risk_score":0.2,
		"quote":{"quote_id":"q","fee":"0","exchange_rate":"1","total_amount":"15000.50","fx_provider":"acme"}}`
	p, err := initiateAnswering(t, data)
	require.NoError(t, err)
	assert.Equal(t, data, string(p.RawJSON()))
	assert.Equal(t, "q", p.Quote.QuoteID)
}

func TestLastResponse(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(503, errorEnvelope("busy")).
		Then(jsonResponder(201, `{"success":true,"message":"Recipient created","stan":"`+stanUUID+`","data":`+recipientJSON+`}`).
			HeaderSet(http.Header{"X-Request-Id": {"rid-9"}})))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), payments.WithIdempotencyKey("rcp-1"))
	require.NoError(t, err)
	resp := r.LastResponse()
	require.NotNil(t, resp)
	assert.Equal(t, stanUUID, resp.Stan)
	assert.Equal(t, "Recipient created", resp.Message)
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, "rid-9", resp.Header.Get("X-Request-Id"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, 2, resp.Attempts)
	assert.Equal(t, "rcp-1", resp.IdempotencyKey)
	assert.JSONEq(t, recipientJSON, string(r.RawJSON()))
}

func TestResourcesNotFromTheAPIHaveNoResponse(t *testing.T) {
	var r payments.Recipient
	require.NoError(t, json.Unmarshal([]byte(recipientJSON), &r))
	assert.Nil(t, r.LastResponse())
	assert.Equal(t, recipientUUID, r.ID)
}

func TestDoAcceptsSuccessWithoutSuccessFlag(t *testing.T) {
	// Client.Do, which cannot know what an operation answers, takes an
	// envelope without "success" but with data as a success; the typed
	// creates and confirms do not (TestGarbledSuccessIsMalformed).
	h := newHarness(t)
	h.on(http.MethodGet, "/reports/1", jsonResponder(200, `{"message":"ok","stan":"s","data":{"id":"r1"}}`))
	var out map[string]any
	r, err := h.client.Do(context.Background(), http.MethodGet, "/reports/1", nil, &out)
	require.NoError(t, err)
	assert.Equal(t, "r1", out["id"])
	assert.Equal(t, "s", r.Stan)
}

func TestLimitAsNumberOrStringOrNull(t *testing.T) {
	for body, want := range map[string]string{
		`"250000.75"`:            "250000.75",
		`250000.75`:              "250000.75",
		`"1234567890.123456789"`: "1234567890.123456789",
		`1234567890.123456789`:   "1234567890.123456789",
		`null`:                   "",
	} {
		t.Run(body, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(`{"id":"x","limit":`+body+`}`)))
			r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			require.NoError(t, err)
			if want == "" {
				assert.Nil(t, r.Limit)
				return
			}
			require.NotNil(t, r.Limit)
			assert.Equal(t, want, r.Limit.String())
		})
	}
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

// createRecipient runs Recipients.Create against a harness answering with r,
// without retries so each test sees exactly one attempt.
func createRecipient(t *testing.T, r httpmock.Responder) (*harness, *payments.Recipient, error) {
	t.Helper()
	h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	h.on(http.MethodPost, "/payments/recipients", r)
	rec, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	return h, rec, err
}

func TestAPIErrorFromErrorEnvelope(t *testing.T) {
	body := `{"success":false,"message":"Validation failed","stan":"` + stanUUID + `","code":"validation_error",
		"errors":[{"field":"account_number","message":"must be 10 digits"},{"field":"account_currency","msg":"unsupported"}]}`
	h, _, err := createRecipient(t, jsonResponder(422, body).HeaderSet(http.Header{"X-Request-Id": {"rid-1"}}))

	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 422, apiErr.StatusCode)
	assert.Equal(t, "Validation failed", apiErr.Message)
	assert.Equal(t, stanUUID, apiErr.Stan)
	assert.Equal(t, "validation_error", string(apiErr.Code))
	assert.Equal(t, []payments.FieldError{
		{Field: "account_number", Message: "must be 10 digits"},
		{Field: "account_currency", Message: "unsupported"},
	}, apiErr.Errors)
	assert.Equal(t, body, string(apiErr.Body))
	assert.Equal(t, "rid-1", apiErr.Header.Get("X-Request-Id"))
	assert.Equal(t, 1, apiErr.Attempts)
	assert.Equal(t, h.requests()[0].Header.Get("Idempotency-Key"), apiErr.IdempotencyKey)
	assert.NotEmpty(t, apiErr.IdempotencyKey)
	assert.ErrorIs(t, err, payments.ErrUnprocessable)
	assert.False(t, apiErr.Temporary())

	assert.Equal(t, "payments: HTTP 422 Unprocessable Entity: Validation failed"+
		"; account_number: must be 10 digits; account_currency: unsupported"+
		" (code=validation_error, stan="+stanUUID+", idempotency_key="+apiErr.IdempotencyKey+") after 1 attempt(s)",
		apiErr.Error())
}

func TestAPIErrorFieldErrorShapes(t *testing.T) {
	cases := []struct {
		name   string
		errors string
		want   []payments.FieldError
	}{
		{"list of objects", `[{"field":"email","message":"taken"}]`,
			[]payments.FieldError{{Field: "email", Message: "taken"}}},
		{"map of strings", `{"email":"taken","account_name":"too long"}`,
			[]payments.FieldError{{Field: "account_name", Message: "too long"}, {Field: "email", Message: "taken"}}},
		{"map of lists", `{"email":["taken","invalid"]}`,
			[]payments.FieldError{{Field: "email", Message: "taken; invalid"}}},
		{"list of strings", `["email is taken","name is too long"]`,
			[]payments.FieldError{{Message: "email is taken"}, {Message: "name is too long"}}},
		{"null", `null`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := createRecipient(t, jsonResponder(400,
				`{"success":false,"message":"bad","stan":"s","errors":`+tc.errors+`}`))
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			if tc.want == nil {
				assert.Empty(t, apiErr.Errors)
			} else {
				assert.Equal(t, tc.want, apiErr.Errors)
			}
		})
	}
}

func TestAPIErrorCodeAndErrorMemberShapes(t *testing.T) {
	cases := []struct {
		name, body, message, code string
	}{
		{"numeric code", `{"success":false,"message":"limit exceeded","code":1042}`, "limit exceeded", "1042"},
		{"error string", `{"error":"invalid_token"}`, "invalid_token", ""},
		{"error object", `{"error":{"message":"Recipient not found","code":"not_found"}}`, "Recipient not found", "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := createRecipient(t, jsonResponder(404, tc.body))
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.message, apiErr.Message)
			assert.Equal(t, tc.code, string(apiErr.Code))
		})
	}
}

func TestSuccessFalseOn200IsAPIError(t *testing.T) {
	_, _, err := createRecipient(t, jsonResponder(200,
		`{"success":false,"message":"Insufficient balance","stan":"`+stanUUID+`","code":"insufficient_funds","data":null}`))
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Equal(t, "Insufficient balance", apiErr.Message)
	assert.Equal(t, "insufficient_funds", string(apiErr.Code))
	assert.Equal(t, stanUUID, apiErr.Stan)
	assert.Contains(t, apiErr.Error(), "payments: HTTP 200 OK: Insufficient balance")
}

func TestMalformedSuccessResponses(t *testing.T) {
	huge := `{"success":true,"data":{"note":"` + strings.Repeat("a", payments.MaxResponseBytes) + `"}}`
	cases := []struct {
		name   string
		answer httpmock.Responder
		reason string
	}{
		{"missing data", jsonResponder(201, `{"success":true,"message":"ok","stan":"s"}`), "the envelope has no data"},
		{"null data", jsonResponder(201, `{"success":true,"message":"ok","stan":"s","data":null}`), "the envelope has no data"},
		{"HTML from a proxy", typedResponder(200, "text/html; charset=utf-8", "<html><body>Welcome</body></html>"), "HTML page"},
		{"plain text", typedResponder(200, "text/plain", "OK"), `"text/plain", not the JSON envelope`},
		{"empty body", jsonResponder(201, ""), "the body is empty"},
		{"whitespace body", jsonResponder(201, " \n "), "the body is empty"},
		{"truncated JSON", jsonResponder(201, `{"success":true,"data":{"id":"3f2b`), "not the JSON envelope"},
		{"JSON array", jsonResponder(201, `[{"id":"`+recipientUUID+`"}]`), "not the JSON envelope"},
		{"JSON string", jsonResponder(201, `"created"`), "not the JSON envelope"},
		{"data of the wrong shape", jsonResponder(201, okEnvelope(`["not","a","recipient"]`)), "data does not match"},
		{"body over the cap", jsonResponder(201, huge), "exceeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, rec, err := createRecipient(t, tc.answer)
			assert.Nil(t, rec)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			assert.ErrorIs(t, err, payments.ErrMalformedResponse)
			assert.Contains(t, merr.Reason, tc.reason)
			assert.Contains(t, err.Error(), "payments: malformed response: ")
			require.NotNil(t, merr.Response)
			assert.Equal(t, h.requests()[0].Header.Get("Idempotency-Key"), merr.Response.IdempotencyKey)
			key, ok := payments.IdempotencyKeyOf(err)
			assert.True(t, ok)
			assert.Equal(t, merr.Response.IdempotencyKey, key)
			assert.LessOrEqual(t, len(merr.Response.Body), payments.MaxResponseBytes)
		})
	}
}

// errAfter is a body that yields prefix, then fails with err.
type errAfter struct {
	prefix io.Reader
	err    error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.prefix.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func (e *errAfter) Close() error { return nil }

func TestTruncatedBodyConnectionDropped(t *testing.T) {
	answer := func(*http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: 201, Header: http.Header{"Content-Type": {"application/json"}},
			Body: &errAfter{prefix: strings.NewReader(`{"success":true,"data":{"id":"3f2b`), err: io.ErrUnexpectedEOF},
		}, nil
	}
	_, _, err := createRecipient(t, answer)
	var merr *payments.MalformedResponseError
	require.ErrorAs(t, err, &merr)
	assert.Equal(t, "reading the body failed", merr.Reason)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "unexpected EOF")
	assert.Contains(t, err.Error(), "HTTP 201")
}

func TestNonEnvelopeErrorBodiesGiveUsefulAPIErrors(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		answer  httpmock.Responder
		message string
	}{
		{"HTML 502 from a proxy", 502, typedResponder(502, "text/html", "<html><h1>502 Bad Gateway</h1></html>"), "HTML page"},
		{"plain text 503", 503, typedResponder(503, "text/plain", "upstream connect error"), "text/plain"},
		{"empty 500", 500, jsonResponder(500, ""), "the body is empty"},
		{"JSON array 400", 400, jsonResponder(400, `["bad request"]`), "not the JSON envelope"},
		{"truncated 500", 500, jsonResponder(500, `{"success":false,"mess`), "not the JSON envelope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := createRecipient(t, tc.answer)
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.StatusCode)
			assert.Contains(t, apiErr.Message, tc.message)
			assert.Contains(t, apiErr.Error(), tc.message)
			assert.Contains(t, apiErr.Error(), fmt.Sprintf("HTTP %d", tc.status))
			assert.Empty(t, apiErr.Stan)
		})
	}
}

func TestErrorBodyIsCapped(t *testing.T) {
	big := `{"success":false,"message":"too big","stan":"s","junk":"` + strings.Repeat("x", payments.MaxResponseBytes+10) + `"}`
	_, _, err := createRecipient(t, jsonResponder(500, big))
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, 16<<10, len(apiErr.Body))
	assert.Equal(t, big[:16<<10], string(apiErr.Body))
}

// Fuzz targets for everything the SDK decodes from the network. Their seed
// corpora live in testdata/fuzz/<target>; a plain `go test` runs every seed,
// and .ci/fuzz runs each target for a few seconds. The targets of one
// resource's decoding are in that resource's test file (FuzzDecodePayment in
// payments_test.go, ...), FuzzAmount in validate_test.go, and the webhook
// targets in webhooks_signature_test.go.

// fzAnswer is an in-memory transport that answers every request with one
// fixed response, and remembers the last request body.
type fzAnswer struct {
	status int
	header http.Header
	body   []byte
	calls  int
	sent   []byte
}

func (a *fzAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	a.calls++
	a.sent = nil
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		a.sent = b
	}
	return &http.Response{
		Status:        http.StatusText(a.status),
		StatusCode:    a.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        a.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}, nil
}

// fzClient returns a client whose only transport is a, without retries, so
// that one call is one decoding of a's answer.
func fzClient(t *testing.T, a *fzAnswer) *payments.Client {
	c, err := payments.NewClient(harnessKey,
		payments.WithBaseURL(harnessBase),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}),
		payments.WithHTTPClient(&http.Client{
			Transport:     a,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fzStatus maps any fuzzed number onto an HTTP status from lo to hi, keeping
// the statuses in that range as they are.
func fzStatus(n uint16, lo, hi int) int {
	if int(n) >= lo && int(n) <= hi {
		return int(n)
	}
	return lo + int(n)%(hi-lo+1)
}

func fzAnswerFor(status int, contentType string, body []byte) *fzAnswer {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &fzAnswer{status: status, header: h, body: body}
}

// fzOperation is one typed operation of the SDK, called with valid params;
// it returns the response metadata of a success.
type fzOperation struct {
	name       string
	idempotent bool // sends an Idempotency-Key of its own
	call       func(c *payments.Client) (*payments.Response, error)
}

var fzOperations = []fzOperation{
	{"Recipients.Create", true, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Recipients.Create(context.Background(), validRecipientParams())
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Recipients.Update", false, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"})
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Payments.Initiate", true, func(c *payments.Client) (*payments.Response, error) {
		p, err := c.Payments.Initiate(context.Background(), validInitiateParams())
		if err != nil {
			return nil, err
		}
		if p.Quote == nil || p.Quote.QuoteID == "" || p.Quote.ExpiresAt.IsZero() {
			return nil, errors.New("Initiate succeeded without a quote id and an expiry")
		}
		return p.LastResponse(), nil
	}},
	{"Payments.Confirm", true, func(c *payments.Client) (*payments.Response, error) {
		p, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID})
		if err != nil {
			return nil, err
		}
		return p.LastResponse(), nil
	}},
	{"VirtualAccounts.Create", false, func(c *payments.Client) (*payments.Response, error) {
		va, err := c.VirtualAccounts.Create(context.Background(), validVirtualAccountParams())
		if err != nil {
			return nil, err
		}
		return va.LastResponse(), nil
	}},
	{"Webhooks.Trigger", false, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Do GET into a map", false, func(c *payments.Client) (*payments.Response, error) {
		var out map[string]any
		return c.Do(context.Background(), http.MethodGet, "/payments/recipients", nil, &out)
	}},
	{"Do DELETE without out", false, func(c *payments.Client) (*payments.Response, error) {
		return c.Do(context.Background(), http.MethodDelete, "/payments/recipients/"+recipientUUID, nil, nil)
	}},
}

// fzCheckErrorText fails when err's text could leak the API key.
func fzCheckErrorText(t *testing.T, err error) {
	t.Helper()
	if s := err.Error(); strings.Contains(s, harnessKey) {
		t.Fatalf("the API key is in the error text: %q", s)
	}
}

// FuzzDecodeEnvelope answers one operation with an arbitrary status, content
// type and body. The call must not panic and must give either a value (for a
// 2xx) or an *APIError or *MalformedResponseError that describes the status,
// carries the call's idempotency key, and never shows the API key.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Fuzz(func(t *testing.T, op uint8, status uint16, contentType string, body []byte) {
		o := fzOperations[int(op)%len(fzOperations)]
		a := fzAnswerFor(fzStatus(status, 100, 599), contentType, body)
		resp, err := o.call(fzClient(t, a))
		if a.calls != 1 {
			t.Fatalf("%s made %d attempts, want 1", o.name, a.calls)
		}
		success := a.status >= 200 && a.status <= 299

		if err == nil {
			if !success {
				t.Fatalf("%s succeeded on HTTP %d", o.name, a.status)
			}
			if resp == nil || resp.StatusCode != a.status || resp.Attempts != 1 {
				t.Fatalf("%s: response metadata %+v for HTTP %d", o.name, resp, a.status)
			}
			return
		}
		fzCheckErrorText(t, err)
		var (
			apiErr *payments.APIError
			malf   *payments.MalformedResponseError
			key    string
		)
		switch {
		case errors.As(err, &apiErr):
			if apiErr.StatusCode != a.status || apiErr.Attempts != 1 {
				t.Fatalf("%s: APIError for HTTP %d says HTTP %d after %d attempts", o.name, a.status, apiErr.StatusCode, apiErr.Attempts)
			}
			if success && !bytes.Contains(body, []byte("false")) {
				t.Fatalf("%s: APIError on HTTP %d though the body never says success is false: %v", o.name, a.status, err)
			}
			if n := min(len(body), 16<<10); !bytes.Equal(apiErr.Body, body[:n]) {
				t.Fatalf("%s: APIError.Body is not the first %d bytes of the body", o.name, n)
			}
			key = apiErr.IdempotencyKey
		case errors.As(err, &malf):
			if !success {
				t.Fatalf("%s: HTTP %d gave a MalformedResponseError rather than an APIError: %v", o.name, a.status, err)
			}
			if malf.Response == nil || malf.Response.StatusCode != a.status || malf.Reason == "" {
				t.Fatalf("%s: MalformedResponseError without its response or reason: %v", o.name, err)
			}
			if !errors.Is(err, payments.ErrMalformedResponse) {
				t.Fatalf("%s: MalformedResponseError does not match ErrMalformedResponse", o.name)
			}
			key = malf.Response.IdempotencyKey
		default:
			t.Fatalf("%s: HTTP %d gave %T, want *APIError or *MalformedResponseError: %v", o.name, a.status, err, err)
		}
		if got, ok := payments.IdempotencyKeyOf(err); got != key || ok != o.idempotent {
			t.Fatalf("%s: IdempotencyKeyOf = %q, %v; the error carries %q", o.name, got, ok, key)
		}
	})
}

// FuzzDecodeErrorBody answers Payments.Confirm with an arbitrary non-2xx
// status and body: the result is always an *APIError for that status that
// keeps the body (capped), matches its status's sentinel, says something
// useful when the body is not JSON, and never shows the API key, even when
// the body carries it.
func FuzzDecodeErrorBody(f *testing.F) {
	sentinels := map[int]error{
		401: payments.ErrUnauthorized, 403: payments.ErrForbidden, 404: payments.ErrNotFound,
		409: payments.ErrConflict, 422: payments.ErrUnprocessable, 429: payments.ErrRateLimited,
	}
	all := []error{payments.ErrUnauthorized, payments.ErrForbidden, payments.ErrNotFound,
		payments.ErrConflict, payments.ErrUnprocessable, payments.ErrRateLimited}
	f.Fuzz(func(t *testing.T, status uint16, contentType string, body []byte) {
		a := fzAnswerFor(fzStatus(status, 300, 599), contentType, body)
		_, err := fzClient(t, a).Payments.Confirm(context.Background(),
			&payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID})
		var apiErr *payments.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("HTTP %d gave %T, want *APIError: %v", a.status, err, err)
		}
		fzCheckErrorText(t, err)
		for _, fe := range apiErr.Errors {
			if strings.Contains(fe.Field+fe.Message, harnessKey) {
				t.Fatalf("the API key is in a field error: %+v", fe)
			}
		}
		if apiErr.StatusCode != a.status || apiErr.IdempotencyKey == "" {
			t.Fatalf("APIError %+v for HTTP %d", apiErr, a.status)
		}
		if n := min(len(body), 16<<10); !bytes.Equal(apiErr.Body, body[:n]) {
			t.Fatalf("APIError.Body is not the first %d bytes of the body", n)
		}
		if !json.Valid(body) && apiErr.Message == "" {
			t.Fatalf("a body that is not JSON gave no message: %v", err)
		}
		for _, s := range all {
			if errors.Is(err, s) != (s == sentinels[a.status]) {
				t.Fatalf("HTTP %d: errors.Is(err, %v) = %v", a.status, s, errors.Is(err, s))
			}
		}
		// Temporary is exactly what the SDK retries.
		temporary := a.status == 408 || a.status == 409 || a.status == 429 || a.status == 500 ||
			a.status == 502 || a.status == 503 || a.status == 504
		if apiErr.Temporary() != temporary {
			t.Fatalf("HTTP %d: Temporary() = %v", a.status, apiErr.Temporary())
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", a.status)) {
			t.Fatalf("the error text does not give the status: %v", err)
		}
	})
}

// fzRoundTrip re-encodes v and decodes the result into fresh, and reports
// whether v could be encoded (a time past year 9999 cannot).
func fzRoundTrip(t *testing.T, v, fresh any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		if !strings.Contains(err.Error(), "year outside of range") {
			t.Fatalf("a decoded value does not encode: %v", err)
		}
		return false
	}
	if err := json.Unmarshal(b, fresh); err != nil {
		t.Fatalf("the SDK cannot decode its own encoding %s: %v", b, err)
	}
	return true
}

// fzSameJSON fails unless a and b encode to the same JSON.
func fzSameJSON(t *testing.T, a, b any) {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil || !bytes.Equal(ja, jb) {
		t.Fatalf("the value changed through encoding and decoding:\n%s\n%s", ja, jb)
	}
}

// fzDecodeLossless decodes data as a T and, when it decodes, checks that it
// survives a round trip through JSON unchanged. It reports whether data
// decoded.
func fzDecodeLossless[T any](t *testing.T, data []byte) (*T, bool) {
	t.Helper()
	var v T
	if json.Unmarshal(data, &v) != nil {
		return nil, false
	}
	var back T
	if fzRoundTrip(t, &v, &back) {
		fzSameJSON(t, &v, &back)
	}
	return &v, true
}

// TestGarbledSuccessIsMalformed: a 2xx to a create or a confirm whose data
// does not identify the resource, or whose envelope has no success flag, is
// an unknown outcome (a *MalformedResponseError with the key to learn it),
// never a nil error with an empty resource: an empty payment status would
// read as "rejected", and a merchant who quotes again may pay twice.
func TestGarbledSuccessIsMalformed(t *testing.T) {
	type op struct {
		method, path, good string
		call               func(c *payments.Client, key string) (any, error)
		garbled            map[string]string // name: data, in a success envelope
	}
	noID := map[string]string{"empty data": `{}`, "no id": `{"account_name":"Ada"}`, "empty id": `{"id":""}`}
	payment := map[string]string{
		"empty data":   `{}`,
		"no id":        `{"reference":"order-1","status":"completed"}`,
		"no status":    `{"id":"` + paymentUUID + `","reference":"order-1"}`,
		"no reference": `{"id":"` + paymentUUID + `","status":"completed"}`,
	}
	ops := map[string]op{
		"Payments.Confirm": {http.MethodPost, "/payments/confirm", confirmedPaymentJSON,
			func(c *payments.Client, key string) (any, error) {
				return c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID}, payments.WithIdempotencyKey(key))
			}, payment},
		"Payments.Initiate": {http.MethodPost, "/payments/initiate", paymentJSON,
			func(c *payments.Client, key string) (any, error) {
				return c.Payments.Initiate(context.Background(), validInitiateParams(), payments.WithIdempotencyKey(key))
			}, payment},
		"Recipients.Create": {http.MethodPost, "/payments/recipients", recipientJSON,
			func(c *payments.Client, key string) (any, error) {
				return c.Recipients.Create(context.Background(), validRecipientParams(), payments.WithIdempotencyKey(key))
			}, noID},
		"Recipients.Update": {http.MethodPut, "/payments/recipients/" + recipientUUID, recipientJSON,
			func(c *payments.Client, key string) (any, error) {
				return c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"}, payments.WithIdempotencyKey(key))
			}, noID},
		"VirtualAccounts.Create": {http.MethodPost, "/accounts/virtual-accounts", virtualAccountJSON,
			func(c *payments.Client, key string) (any, error) {
				return c.VirtualAccounts.Create(context.Background(), validVirtualAccountParams(), payments.WithIdempotencyKey(key))
			}, noID},
	}
	for name, o := range ops {
		bodies := map[string]string{
			"no success flag": `{"message":"ok","stan":"` + stanUUID + `","data":` + o.good + `}`,
		}
		for g, data := range o.garbled {
			bodies[g] = okEnvelope(data)
		}
		for g, body := range bodies {
			t.Run(name+"/"+g, func(t *testing.T) {
				h := newHarness(t)
				h.on(o.method, o.path, jsonResponder(200, body))
				res, err := o.call(h.client, "order-1-key")
				assert.Nil(t, res)
				var merr *payments.MalformedResponseError
				require.ErrorAs(t, err, &merr)
				assert.ErrorIs(t, err, payments.ErrMalformedResponse)
				key, ok := payments.IdempotencyKeyOf(err)
				assert.True(t, ok)
				assert.Equal(t, "order-1-key", key)
				assert.Equal(t, "order-1-key", h.onlyRequest(t).Header.Get("Idempotency-Key"))
				assert.Equal(t, 1, h.calls(), "an unknown outcome is not retried")
				require.NotNil(t, merr.Response, "what was received is kept")
				assert.Equal(t, 1, merr.Response.Attempts)
				assert.Equal(t, stanUUID, merr.Response.Stan)
				assert.Equal(t, body, string(merr.Response.Body))
				assert.Contains(t, err.Error(), "the outcome is unknown")
			})
		}
	}
}
