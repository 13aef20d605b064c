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

	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/shopspring/decimal"
)

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
			assert.NotErrorIs(t, err, payments.CodeQuoteExpired)
		})
	}
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
	h = newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(409, errorEnvelope("in progress")))
	_, err = h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("5")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "r",
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

// The service's refusal that says how much to fund reaches the merchant as
// sent, in Message, in a field problem and in Error(): amounts of 8 integer
// digits and more are money, not account numbers. An account number in the
// same message is still masked.
func TestAPIErrorMessageKeepsAmounts(t *testing.T) {
	const msg = "the NGN balance (12345678.90) is less than the quote's total_amount (20300000.00)"
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(422, `{"success":false,"code":"insufficient_balance",`+
		`"message":"`+msg+`","errors":[{"field":"amount","message":"fund NGN 7954321.10 more, to account 0123456789"}]}`))
	_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1", QuoteID: "q-1"})
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, msg, apiErr.Message)
	assert.Equal(t, "fund NGN 7954321.10 more, to account ****6789", apiErr.Errors[0].Message)
	assert.Contains(t, err.Error(), msg)
	assert.NotContains(t, err.Error(), "0123456789")
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
		for status, want := range map[int]bool{400: false, 401: false, 404: false, 408: true, 409: true, 422: false, 429: true,
			500: true, 501: false, 502: true, 503: true, 504: true, 505: false} {
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
			payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}), payments.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
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

func TestValidationErrorIsNotOtherErrors(t *testing.T) {
	err := error(&payments.ValidationError{Fields: []payments.FieldError{{Field: "x", Message: "y"}}})
	var apiErr *payments.APIError
	assert.False(t, errors.As(err, &apiErr))
	assert.NotErrorIs(t, err, payments.ErrMalformedResponse)
}

// TestErrorCodesMatchWithErrorsIs: an *APIError matches its code with
// errors.Is, prints the bare code, and a caller never compares strings.
func TestErrorCodesMatchWithErrorsIs(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	params := &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString("10")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-codes"}
	p, err := c.Payments.Initiate(ctx, params)
	require.NoError(t, err)
	_, err = c.Payments.Initiate(ctx, params)
	assert.ErrorIs(t, err, payments.CodeDuplicateReference)
	assert.NotErrorIs(t, err, payments.CodeQuoteExpired)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, payments.CodeDuplicateReference, apiErr.Code)
	assert.Equal(t, "code duplicate_reference", fmt.Sprintf("code %s", apiErr.Code), "a code prints as itself")

	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	assert.ErrorIs(t, err, payments.CodeQuoteAlreadyConfirmed)
	assert.False(t, errors.Is(err, payments.CodeQuoteExpired))
}

// TestErrorCodesOnTheWire: each code is the string the Assumptions table
// names. paymentstest sends the SDK's constants, so a changed value would
// go unnoticed between the two without this list.
func TestErrorCodesOnTheWire(t *testing.T) {
	pairs := map[payments.ErrorCode]string{
		payments.CodeValidationFailed:      "validation_failed",
		payments.CodeQuoteExpired:          "quote_expired",
		payments.CodeQuoteAlreadyConfirmed: "quote_already_confirmed",
		payments.CodeDuplicateReference:    "duplicate_reference",
		payments.CodeIdempotencyKeyReused:  "idempotency_key_reused",
		payments.CodeIdempotencyInProgress: "idempotency_in_progress",
		payments.CodeInvalidIdempotencyKey: "invalid_idempotency_key",
		payments.CodeUnauthorized:          "unauthorized",
		payments.CodeNotFound:              "not_found",
		payments.CodeWebhookNotConfigured:  "webhook_not_configured",
		payments.CodeInvalidJSON:           "invalid_json",
		payments.CodeMethodNotAllowed:      "method_not_allowed",
		payments.CodeUnsupportedMediaType:  "unsupported_media_type",
		payments.CodePayloadTooLarge:       "payload_too_large",
		payments.CodeInternal:              "internal_error",
		payments.CodeShuttingDown:          "shutting_down",

		payments.CodeInsufficientBalance:         "insufficient_balance",
		payments.CodeRecipientVerificationFailed: "recipient_verification_failed",
		payments.CodeRecipientNotVerified:        "recipient_not_verified",
		payments.CodeUnknownEventCursor:          "unknown_cursor",
	}
	for code, wire := range pairs {
		assert.Equal(t, wire, string(code))
	}
}

// A refusal is stored for its idempotency key: the same key with the same
// body replays it after its cause is gone (the account funded here), and the
// error says so; a new key does the work.
func TestAPIErrorSaysWhenItsAnswerWasReplayed(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.RequireFromString("5000")))
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	rcpt, err := c.Recipients.Create(ctx, validRecipientParams())
	require.NoError(t, err)
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("4990")}, Currency: "NGN", RecipientID: rcpt.ID, Reference: "order-7",
	}, payments.WithIdempotencyKey("order-7-initiate"))
	require.NoError(t, err)

	confirm := func(key string) error {
		_, err := c.Payments.Confirm(ctx, p.ConfirmParams(), payments.WithIdempotencyKey(key))
		return err
	}
	err = confirm("order-7-confirm")
	var first *payments.APIError
	require.ErrorAs(t, err, &first)
	assert.ErrorIs(t, err, payments.CodeInsufficientBalance)
	assert.False(t, first.Replayed, "the first answer is not a replay")
	assert.NotContains(t, err.Error(), "replayed")

	va, err := c.VirtualAccounts.Create(ctx, benchVirtualAccountParams())
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("100000"), "NGN")
	require.NoError(t, err)

	err = confirm("order-7-confirm")
	var again *payments.APIError
	require.ErrorAs(t, err, &again)
	assert.ErrorIs(t, err, payments.CodeInsufficientBalance, "funded, but the same key replays the refusal")
	assert.True(t, again.Replayed)
	assert.Equal(t, first.Stan, again.Stan, "the very same answer")
	assert.Equal(t, "payments: HTTP 422 Unprocessable Entity: "+again.Message+" (code=insufficient_balance, stan="+again.Stan+
		", idempotency_key=order-7-confirm) after 1 attempt(s); a replayed answer (the first one to this idempotency key): a cause fixed since needs a new key",
		err.Error())

	require.NoError(t, confirm("order-7-confirm-2"), "a new key confirms")
	paid := srv.PaymentsByReference("order-7")
	require.Len(t, paid, 1)
	assert.Equal(t, payments.PaymentStatusCompleted, paid[0].Status)
}
