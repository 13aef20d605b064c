package payments_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// createRecipient runs Recipients.Create against a harness answering with r,
// without retries so each test sees exactly one attempt.
func createRecipient(t *testing.T, r httpmock.Responder) (*harness, *payments.Recipient, error) {
	t.Helper()
	h := newHarness(t, payments.WithMaxRetries(0))
	h.on(http.MethodPost, "/payments/recipients", r)
	rec, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	return h, rec, err
}

func TestAPIErrorFromErrorEnvelope(t *testing.T) {
	body := `{"success":false,"message":"Validation failed","stan":"` + stanUUID + `","code":"validation_error",
		"errors":[{"field":"account_number","message":"must be 10 digits"},{"field":"account_currency","msg":"unsupported"}]}`
	h, _, err := createRecipient(t, withHeader(jsonResponder(422, body), "X-Request-Id", "rid-1"))

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

func TestAPIErrorMatchesStatusSentinels(t *testing.T) {
	sentinels := []error{
		payments.ErrUnauthorized, payments.ErrForbidden, payments.ErrNotFound,
		payments.ErrConflict, payments.ErrUnprocessable, payments.ErrRateLimited,
	}
	want := map[int]error{
		401: payments.ErrUnauthorized,
		403: payments.ErrForbidden,
		404: payments.ErrNotFound,
		409: payments.ErrConflict,
		422: payments.ErrUnprocessable,
		429: payments.ErrRateLimited,
		400: nil,
		500: nil,
	}
	for status, sentinel := range want {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			_, _, err := createRecipient(t, jsonResponder(status, errorEnvelope("x")))
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			for _, s := range sentinels {
				assert.Equal(t, s == sentinel, errors.Is(err, s), "errors.Is(%d, %v)", status, s)
			}
			wrapped := fmt.Errorf("charging order 7: %w", err)
			if sentinel != nil {
				assert.ErrorIs(t, wrapped, sentinel)
			}
			var again *payments.APIError
			assert.ErrorAs(t, wrapped, &again)
			assert.NotErrorIs(t, err, payments.ErrMalformedResponse)
			assert.NotErrorIs(t, err, payments.ErrInvalidParams)
			assert.NotErrorIs(t, err, payments.ErrQuoteExpired)
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
			assert.LessOrEqual(t, len(merr.Response.RawData), payments.MaxResponseBytes)
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

func TestHTMLErrorIsRetriedThenKept(t *testing.T) {
	h := newHarness(t)
	page := "<html><h1>502 Bad Gateway</h1><p>nginx</p></html>"
	h.on(http.MethodPost, "/payments/recipients", typedResponder(502, "text/html", page))
	_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 3, apiErr.Attempts)
	assert.Equal(t, page, string(apiErr.Body))
	assert.Equal(t, "text/html", apiErr.Header.Get("Content-Type"))
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

func TestNetworkFailureIsTransportError(t *testing.T) {
	_, _, err := createRecipient(t, httpmock.NewErrorResponder(errConnReset))
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.ErrorIs(t, err, errConnReset)
	assert.Equal(t, http.MethodPost, terr.Method)
	assert.Equal(t, "/payments/recipients", terr.Path)
	assert.Equal(t, 1, terr.Attempts)
	assert.NotEmpty(t, terr.IdempotencyKey)
	assert.Contains(t, err.Error(), "payments: POST /payments/recipients: ")
	assert.Contains(t, err.Error(), "connection reset by peer")
	assert.Contains(t, err.Error(), "(idempotency_key="+terr.IdempotencyKey+") after 1 attempt(s)")
	assert.NotErrorIs(t, err, payments.ErrMalformedResponse)
	var apiErr *payments.APIError
	assert.False(t, errors.As(err, &apiErr))
}

func TestIdempotencyKeyOf(t *testing.T) {
	h, _, err := createRecipient(t, jsonResponder(500, errorEnvelope("x")))
	key, ok := payments.IdempotencyKeyOf(fmt.Errorf("wrapped: %w", err))
	assert.True(t, ok)
	assert.Equal(t, h.requests()[0].Header.Get("Idempotency-Key"), key)

	_, _, err = createRecipient(t, httpmock.NewErrorResponder(errConnReset))
	key, ok = payments.IdempotencyKeyOf(err)
	assert.True(t, ok)
	assert.NotEmpty(t, key)

	for _, e := range []error{
		nil,
		errors.New("other"),
		&payments.ValidationError{Fields: []payments.FieldError{{Field: "x", Message: "y"}}},
		&payments.APIError{StatusCode: 500},
		&payments.MalformedResponseError{Reason: "r"},
	} {
		key, ok := payments.IdempotencyKeyOf(e)
		assert.False(t, ok, "%v", e)
		assert.Empty(t, key)
	}

	// The key of a call the caller keyed comes back as given.
	h = newHarness(t, payments.WithMaxRetries(0))
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(409, errorEnvelope("in progress")))
	_, err = h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: mustDecimal("5"), Currency: "NGN", RecipientID: recipientUUID, Reference: "r",
	}, payments.WithIdempotencyKey("order-5"))
	key, ok = payments.IdempotencyKeyOf(err)
	assert.True(t, ok)
	assert.Equal(t, "order-5", key)
}

func TestAPIKeyNeverInErrorStrings(t *testing.T) {
	jwtKey := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZXJjaGFudC00MiJ9.c2lnbmF0dXJlLXZhbHVl"
	for _, key := range []string{harnessKey, jwtKey} {
		echoes := []string{
			`{"success":false,"message":"invalid key ` + key + `","stan":"s"}`,
			`{"success":false,"message":"Authorization: Bearer ` + key + ` rejected","stan":"s"}`,
			`{"success":false,"message":"no","code":"` + key + `","errors":[{"field":"` + key + `","message":"token ` + key + ` expired"}]}`,
			`{"error":{"message":"bad token ` + key + `","code":"invalid_token"}}`,
			`{"success":false,"message":"no","errors":{"authorization":["` + key + ` is revoked"]}}`,
		}
		for i, body := range echoes {
			t.Run(fmt.Sprintf("%.8s/%d", key, i), func(t *testing.T) {
				mt := httpmock.NewMockTransport()
				mt.RegisterNoResponder(jsonResponder(401, body))
				c, err := payments.NewClient(key, payments.WithBaseURL(harnessBase),
					payments.WithHTTPClient(&http.Client{Transport: mt}))
				require.NoError(t, err)
				_, err = c.Recipients.Create(context.Background(), validRecipientParams())
				require.ErrorIs(t, err, payments.ErrUnauthorized)
				assert.NotContains(t, err.Error(), key)
				assert.NotContains(t, fmt.Sprintf("%v|%+v|%s", err, err, err), key)
				var apiErr *payments.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.NotContains(t, apiErr.Message, key)
				for _, f := range apiErr.Errors {
					assert.NotContains(t, f.Field+f.Message, key)
				}
			})
		}
	}
}

func TestAPIErrorMessageMasksPersonalData(t *testing.T) {
	_, _, err := createRecipient(t, jsonResponder(422,
		`{"success":false,"message":"account 0123456789 rejected for BVN 22233344455"}`))
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotContains(t, err.Error(), "0123456789")
	assert.NotContains(t, err.Error(), "22233344455")
	assert.Contains(t, err.Error(), "****6789", "the last four digits stay to tell accounts apart")
}

func TestErrorStrings(t *testing.T) {
	t.Run("APIError minimal", func(t *testing.T) {
		e := &payments.APIError{StatusCode: 404, Attempts: 1}
		assert.Equal(t, "payments: HTTP 404 Not Found after 1 attempt(s)", e.Error())
	})
	t.Run("APIError unknown status", func(t *testing.T) {
		e := &payments.APIError{StatusCode: 599, Message: "odd", Stan: "st-1", Attempts: 2}
		assert.Equal(t, "payments: HTTP 599: odd (stan=st-1) after 2 attempt(s)", e.Error())
	})
	t.Run("ValidationError", func(t *testing.T) {
		e := &payments.ValidationError{Fields: []payments.FieldError{
			{Field: "account_name", Message: "is required"},
			{Field: "email", Message: "is not a valid email address"},
		}}
		assert.Equal(t, "payments: invalid parameters: account_name: is required; email: is not a valid email address", e.Error())
		assert.ErrorIs(t, e, payments.ErrInvalidParams)
		assert.True(t, e.Has("email"))
		assert.False(t, e.Has("bvn"))
	})
	t.Run("TransportError", func(t *testing.T) {
		e := &payments.TransportError{Method: "PUT", Path: "/payments/recipients/x", Attempts: 3, Err: context.DeadlineExceeded}
		assert.Equal(t, "payments: PUT /payments/recipients/x: context deadline exceeded after 3 attempt(s)", e.Error())
		assert.ErrorIs(t, e, context.DeadlineExceeded)
		e.IdempotencyKey = "k-1"
		assert.Equal(t, "payments: PUT /payments/recipients/x: context deadline exceeded (idempotency_key=k-1) after 3 attempt(s); the outcome is unknown: retry with the same idempotency key to learn it", e.Error())
	})
	t.Run("MalformedResponseError", func(t *testing.T) {
		e := &payments.MalformedResponseError{Reason: "the envelope has no data",
			Response: &payments.Response{StatusCode: 200, Stan: "st-2", IdempotencyKey: "k-2"}}
		assert.Equal(t, "payments: malformed response: the envelope has no data (HTTP 200, stan=st-2, idempotency_key=k-2); the outcome is unknown: retry with the same idempotency key to learn it", e.Error())
		cause := errors.New("unexpected end of JSON input")
		e = &payments.MalformedResponseError{Reason: "the body is not the JSON envelope", Err: cause}
		assert.Equal(t, "payments: malformed response: the body is not the JSON envelope: unexpected end of JSON input", e.Error())
		assert.ErrorIs(t, e, cause)
		assert.ErrorIs(t, e, payments.ErrMalformedResponse)
	})
	t.Run("Temporary", func(t *testing.T) {
		for status, want := range map[int]bool{400: false, 401: false, 404: false, 408: true, 409: true, 422: false, 429: true, 500: true, 503: true} {
			assert.Equal(t, want, (&payments.APIError{StatusCode: status}).Temporary(), "%d", status)
		}
	})
}

// TestEchoedKeyNeverHeldByAnError: a service that echoes the key in a status
// line, or in a value that fails to decode, gets errors whose text, %#v and
// the SDK's WARN log line all mask it. No error value holds the key in a
// field.
func TestEchoedKeyNeverHeldByAnError(t *testing.T) {
	t.Run("status line", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer conn.Close()
					_, _ = bufio.NewReader(conn).ReadString('\n')
					_, _ = io.WriteString(conn, "HTTP/1.1 "+harnessKey+" OK\r\nContent-Length: 0\r\n\r\n")
				}()
			}
		}()
		var logs bytes.Buffer
		c, err := payments.NewClient(harnessKey, payments.WithBaseURL("http://"+ln.Addr().String()),
			payments.WithMaxRetries(0), payments.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		require.NoError(t, err)
		_, err = c.Payments.Initiate(context.Background(), validInitiateParams())
		var terr *payments.TransportError
		require.ErrorAs(t, err, &terr)
		assert.Contains(t, err.Error(), "malformed HTTP status code")
		for _, printed := range []string{err.Error(), fmt.Sprintf("%+v|%#v", err, err), fmt.Sprintf("%#v", terr.Err), logs.String()} {
			assert.NotContains(t, printed, harnessKey)
		}
		assert.Contains(t, logs.String(), "level=WARN")
	})
	t.Run("value that does not decode", func(t *testing.T) {
		_, _, err := createRecipient(t, jsonResponder(201,
			`{"success":true,"stan":"s","data":{"id":"x","created_at":"`+harnessKey+`"}}`))
		var merr *payments.MalformedResponseError
		require.ErrorAs(t, err, &merr)
		assert.Contains(t, merr.Error(), "[redacted]")
		assert.NotContains(t, fmt.Sprintf("%v|%+v|%#v|%#v", err, err, merr, merr.Err), harnessKey)
	})
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

// TestHostileTextIsEscaped: line breaks, ANSI escapes and invalid UTF-8 in
// what the service sends cannot forge a log line or restyle a terminal.
func TestHostileTextIsEscaped(t *testing.T) {
	var logs bytes.Buffer
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(typedResponder(422, "application/json",
		"{\"success\":false,\"message\":\"bad\\nlevel=ERROR msg=forged \\u001b[31mred\",\"code\":\"c\\r\\nX\",\"stan\":\"s\\n1\","+
			"\"errors\":[{\"field\":\"f\\n\",\"message\":\"m\\u001b]0;title\\u0007\"}]}"))
	c, err := payments.NewClient(harnessKey, payments.WithBaseURL(harnessBase),
		payments.WithHTTPClient(&http.Client{Transport: mt}), payments.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	_, err = c.Payments.Initiate(context.Background(), validInitiateParams())
	require.Error(t, err)
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	assert.NotContains(t, msg, "\r")
	assert.NotContains(t, msg, "\x1b")
	assert.NotContains(t, msg, "\x07")
	assert.Contains(t, msg, `bad\nlevel=ERROR msg=forged \x1b[31mred`)
	assert.Contains(t, msg, `code=c\r\nX`)
	assert.Equal(t, 1, strings.Count(logs.String(), "\n"), "one log line, none forged")

	mt.RegisterNoResponder(typedResponder(200, "text/html\nlevel=ERROR \xff", "<html>"))
	_, err = c.Payments.Initiate(context.Background(), validInitiateParams())
	require.ErrorIs(t, err, payments.ErrMalformedResponse)
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "\xff")
	assert.True(t, utf8.ValidString(err.Error()))
}
