package payments_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestRetryMatrixRetryableStatuses(t *testing.T) {
	for _, status := range []int{408, 409, 429, 500, 502, 503, 504} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4}))
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(status, errorEnvelope("try again")))

			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 4, h.calls(), "1 attempt + 3 retries")
			assert.Equal(t, 4, apiErr.Attempts)
			assert.Equal(t, status, apiErr.StatusCode, "the final status is kept")
			assert.Equal(t, "try again", apiErr.Message)
			assert.Equal(t, stanUUID, apiErr.Stan)
			assert.JSONEq(t, errorEnvelope("try again"), string(apiErr.Body), "the final body is kept")
			assert.True(t, apiErr.Temporary())
			assertSameKeyOnEveryAttempt(t, h.requests(), 4, apiErr.IdempotencyKey)
		})
	}
}

func assertSameKeyOnEveryAttempt(t *testing.T, reqs []sentRequest, n int, key string) {
	t.Helper()
	require.Len(t, reqs, n)
	require.NotEmpty(t, key)
	for i, r := range reqs {
		assert.Equal(t, key, r.Header.Get("Idempotency-Key"), "attempt %d", i+1)
		assert.Equal(t, string(reqs[0].Body), string(r.Body), "attempt %d sends the same body", i+1)
	}
}

func TestRetryMatrixNonRetryableStatuses(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 405, 410, 413, 422, 501} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4}))
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(status, errorEnvelope("no")))

			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 1, h.calls())
			assert.Equal(t, 1, apiErr.Attempts)
			assert.Equal(t, status, apiErr.StatusCode)
		})
	}
}

func TestRetryRecoversAndReportsAttempts(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(503, errorEnvelope("busy")).
		Then(httpmock.NewErrorResponder(errConnReset)).
		Then(jsonResponder(200, okEnvelope(paymentJSON))))
	p, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("15000.50")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042",
	})
	require.NoError(t, err)
	assert.Equal(t, 3, h.calls())
	assert.Equal(t, 3, p.LastResponse().Attempts)
	assert.Equal(t, 200, p.LastResponse().StatusCode)
	assertSameKeyOnEveryAttempt(t, h.requests(), 3, p.LastResponse().IdempotencyKey)
}

func TestRetryConnectionErrors(t *testing.T) {
	h := newHarness(t) // default: 2 retries
	h.on(http.MethodPost, "/payments/confirm", httpmock.NewErrorResponder(errConnReset))

	_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: quoteUUID})
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.ErrorIs(t, err, errConnReset, "the cause is wrapped")
	assert.Equal(t, 3, h.calls())
	assert.Equal(t, 3, terr.Attempts)
	assert.Equal(t, http.MethodPost, terr.Method)
	assert.Equal(t, "/payments/confirm", terr.Path)
	assertSameKeyOnEveryAttempt(t, h.requests(), 3, terr.IdempotencyKey)
}

func TestRetryPostWithoutKeyIsNotRetried(t *testing.T) {
	type op struct {
		name, path string
		call       func(c *payments.Client, opts ...payments.RequestOption) error
	}
	ops := []op{
		{"VirtualAccounts.Create", "/accounts/virtual-accounts", func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
				AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example",
			}, opts...)
			return err
		}},
		{"Webhooks.Trigger", "/webhooks/events/trigger/payment.completed", func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted, opts...)
			return err
		}},
	}
	answers := map[string]httpmock.Responder{
		"503":              jsonResponder(503, errorEnvelope("busy")),
		"connection error": httpmock.NewErrorResponder(errConnReset),
	}
	for _, o := range ops {
		for name, answer := range answers {
			t.Run(o.name+"/"+name+"/no key", func(t *testing.T) {
				h := newHarness(t)
				h.on(http.MethodPost, o.path, answer)
				err := o.call(h.client)
				require.Error(t, err)
				assert.Equal(t, 1, h.calls(), "a POST without an Idempotency-Key may act twice: never retried")
				_, hasKey := payments.IdempotencyKeyOf(err)
				assert.False(t, hasKey)
				assert.Empty(t, h.requests()[0].Header.Get("Idempotency-Key"))
			})
			t.Run(o.name+"/"+name+"/with key", func(t *testing.T) {
				h := newHarness(t)
				h.on(http.MethodPost, o.path, answer)
				err := o.call(h.client, payments.WithIdempotencyKey("caller-key-1"))
				require.Error(t, err)
				assert.Equal(t, 3, h.calls(), "with an Idempotency-Key the POST is safe to retry")
				key, ok := payments.IdempotencyKeyOf(err)
				assert.True(t, ok)
				assert.Equal(t, "caller-key-1", key)
				assertSameKeyOnEveryAttempt(t, h.requests(), 3, "caller-key-1")
			})
		}
	}
}

func TestRetryPutIsRetried(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, jsonResponder(503, errorEnvelope("busy")).
		Then(httpmock.NewErrorResponder(errConnReset)).
		Then(jsonResponder(200, okEnvelope(recipientJSON))))
	r, err := h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"})
	require.NoError(t, err)
	assert.Equal(t, 3, h.calls())
	assert.Equal(t, 3, r.LastResponse().Attempts)
	reqs := h.requests()
	require.Len(t, reqs, 3)
	for _, req := range reqs {
		assert.JSONEq(t, `{"account_name":"Ada"}`, string(req.Body), "the body is re-sent whole on each attempt")
	}
}

func TestRetryGetThroughDoIsRetried(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/payments/recipients/"+recipientUUID, jsonResponder(502, "bad gateway").
		Then(jsonResponder(200, okEnvelope(recipientJSON))))
	resp, err := h.client.Do(context.Background(), http.MethodGet, "/payments/recipients/"+recipientUUID, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, resp.Attempts)
}

func TestRetryMaxRetriesZeroMeansOneAttempt(t *testing.T) {
	for _, answer := range []httpmock.Responder{
		jsonResponder(503, errorEnvelope("busy")),
		httpmock.NewErrorResponder(errConnReset),
	} {
		h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
		h.on(http.MethodPost, "/payments/recipients", answer)
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
		require.Error(t, err)
		assert.Equal(t, 1, h.calls())
	}
}

func TestRetryFinalResponseIsKeptAfterLastAttempt(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(500, errorEnvelope("first")).
		Then(jsonResponder(502, errorEnvelope("second"))).
		Then(jsonResponder(503, `{"success":false,"message":"down for maintenance","stan":"`+stanUUID+`","code":"maintenance"}`).
			HeaderSet(http.Header{"X-Request-Id": {"rid-3"}})))
	_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("1")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "r",
	})
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Equal(t, "down for maintenance", apiErr.Message)
	assert.Equal(t, "maintenance", string(apiErr.Code))
	assert.Equal(t, 3, apiErr.Attempts)
	assert.Equal(t, "rid-3", apiErr.Header.Get("X-Request-Id"))
	assert.Contains(t, string(apiErr.Body), "down for maintenance")
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

// retryAfterServer answers the first request with status and a Retry-After,
// and every later one with a success envelope.
func retryAfterServer(t *testing.T, status int, retryAfter func() string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", retryAfter())
			w.WriteHeader(status)
			fmt.Fprint(w, errorEnvelope("slow down"))
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, okEnvelope(recipientJSON))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetryAfterIsCappedAtMaxWait(t *testing.T) {
	cases := map[string]func() string{
		"seconds":   func() string { return "3600" },
		"HTTP date": func() string { return time.Now().Add(time.Hour).UTC().Format(http.TimeFormat) },
	}
	for name, ra := range cases {
		t.Run(name, func(t *testing.T) {
			srv, n := retryAfterServer(t, http.StatusTooManyRequests, ra)
			c, err := payments.NewClient(harnessKey, payments.WithBaseURL(srv.URL),
				payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 50 * time.Millisecond}))
			require.NoError(t, err)

			// The deadline turns a regression (an hour's wait) into a quick failure.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			r, err := c.Recipients.Create(ctx, validRecipientParams())
			require.NoError(t, err)
			assert.Less(t, time.Since(start), 2*time.Second, "a Retry-After of an hour is capped at the 50ms maximum wait")
			assert.EqualValues(t, 2, n.Load())
			assert.Equal(t, 2, r.LastResponse().Attempts)
		})
	}
}

// TestRetryAfterIsHonoured shows the client waits for Retry-After (within the
// maximum wait) instead of its own 1ms back-off: with a deadline shorter than
// the Retry-After, the call ends during the wait, after exactly one attempt.
func TestRetryAfterIsHonoured(t *testing.T) {
	cases := map[string]func() string{
		"seconds":   func() string { return "5" },
		"HTTP date": func() string { return time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat) },
	}
	for name, ra := range cases {
		t.Run(name, func(t *testing.T) {
			srv, n := retryAfterServer(t, http.StatusServiceUnavailable, ra)
			c, err := payments.NewClient(harnessKey, payments.WithBaseURL(srv.URL),
				payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: time.Minute}))
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = c.Recipients.Create(ctx, validRecipientParams())
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			var terr *payments.TransportError
			require.ErrorAs(t, err, &terr)
			assert.Equal(t, 1, terr.Attempts)
			assert.EqualValues(t, 1, n.Load(), "no second attempt before Retry-After has passed")
			assert.Less(t, time.Since(start), 3*time.Second, "the wait ends with the context")
		})
	}
}

// cancelAfterResponse is a transport that cancels the call's context shortly
// after the first response has been handed back, i.e. while the client is
// waiting before the next attempt.
type cancelAfterResponse struct {
	next   http.RoundTripper
	cancel context.CancelFunc
	once   atomic.Bool
}

func (c *cancelAfterResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if c.once.CompareAndSwap(false, true) {
		time.AfterFunc(20*time.Millisecond, c.cancel)
	}
	return resp, err
}

func TestRetryCancelDuringBackoffReturnsPromptly(t *testing.T) {
	for _, answer := range map[string]httpmock.Responder{
		"503 with Retry-After": jsonResponder(503, errorEnvelope("busy")).HeaderSet(http.Header{"Retry-After": {"3600"}}),
		"connection error":     httpmock.NewErrorResponder(errConnReset),
	} {
		mt := httpmock.NewMockTransport()
		mt.RegisterResponder(http.MethodPost, harnessBase+"/payments/recipients", answer)
		ctx, cancel := context.WithCancel(context.Background())
		c, err := payments.NewClient(harnessKey,
			payments.WithBaseURL(harnessBase),
			payments.WithHTTPClient(&http.Client{Transport: &cancelAfterResponse{next: mt, cancel: cancel}}),
			payments.WithRetries(payments.RetryPolicy{WaitMin: time.Hour, WaitMax: time.Hour}), // without cancellation the wait is an hour
			payments.WithRetries(payments.RetryPolicy{MaxAttempts: 6}),
		)
		require.NoError(t, err)

		start := time.Now()
		_, err = c.Recipients.Create(ctx, validRecipientParams())
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.ErrorIs(t, err, context.Canceled)
		var terr *payments.TransportError
		require.ErrorAs(t, err, &terr)
		assert.Equal(t, 1, terr.Attempts)
		assert.NotEmpty(t, terr.IdempotencyKey, "the key is reported so the call can be retried later")
		assert.Equal(t, 1, mt.GetTotalCallCount(), "no attempt after cancellation")
		cancel()
	}
}

func TestRetryContextAlreadyCancelled(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.client.Recipients.Create(ctx, validRecipientParams())
	assert.ErrorIs(t, err, context.Canceled)
	var terr *payments.TransportError
	assert.ErrorAs(t, err, &terr)
	assert.LessOrEqual(t, h.calls(), 1)
}

// TestRetryWaitsStartAtTheMinimum: the documented minimum is the shortest
// wait; the first retry comes between min and 1.5*min.
func TestRetryWaitsStartAtTheMinimum(t *testing.T) {
	var times []time.Time
	h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2}), payments.WithRetries(payments.RetryPolicy{WaitMin: 80 * time.Millisecond, WaitMax: time.Second}))
	h.on(http.MethodPost, "/payments/recipients", func(*http.Request) (*http.Response, error) {
		times = append(times, time.Now())
		if len(times) == 1 {
			return httpmock.NewStringResponse(http.StatusServiceUnavailable, ""), nil
		}
		return jsonResponder(201, okEnvelope(recipientJSON))(nil)
	})
	_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	require.Len(t, times, 2)
	assert.GreaterOrEqual(t, times[1].Sub(times[0]), 80*time.Millisecond, "never sooner than the minimum")
}
