package paymentstest_test

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestServerBasics(t *testing.T) {
	srv, c := start(t)
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	assert.Equal(t, "http", u.Scheme)
	assert.Equal(t, "127.0.0.1", u.Hostname())
	assert.Len(t, strings.Split(srv.APIKey(), "."), 3, "the key is shaped like a JWT")
	require.NoError(t, uuid.Validate(srv.MerchantID()))

	r := createRecipient(t, c, "")
	assert.Equal(t, srv.MerchantID(), r.MerchantID)
	assert.Equal(t, http.StatusCreated, r.LastResponse().StatusCode)
	require.NoError(t, uuid.Validate(r.LastResponse().Stan))

	other := paymentstest.NewServer()
	defer other.Close()
	assert.NotEqual(t, srv.APIKey(), other.APIKey(), "every server has its own key")
	assert.NotEqual(t, srv.URL(), other.URL())
}

func TestStartServerOptions(t *testing.T) {
	srv, err := paymentstest.StartServer(paymentstest.WithAddr("127.0.0.1:0"), paymentstest.WithAPIKey("sandbox-key"))
	require.NoError(t, err)
	defer srv.Close()
	assert.Equal(t, "sandbox-key", srv.APIKey())
	_, err = srv.Client().Recipients.Create(ctx(t), recipientParams())
	require.NoError(t, err)

	// The same address twice cannot work.
	busy := strings.TrimPrefix(srv.URL(), "http://")
	_, err = paymentstest.StartServer(paymentstest.WithAddr(busy))
	require.Error(t, err)

	// An unspecified host is reachable through loopback.
	any4, err := paymentstest.StartServer(paymentstest.WithAddr("0.0.0.0:0"))
	require.NoError(t, err)
	defer any4.Close()
	host, _, err := net.SplitHostPort(strings.TrimPrefix(any4.URL(), "http://"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
}

func TestInvalidOptions(t *testing.T) {
	for name, opt := range map[string]paymentstest.Option{
		"empty addr":         paymentstest.WithAddr(" "),
		"key with a space":   paymentstest.WithAPIKey("a b"),
		"empty key":          paymentstest.WithAPIKey(""),
		"nil clock":          paymentstest.WithClock(nil),
		"ftp webhook":        paymentstest.WithWebhook(paymentstest.Webhook{URL: "ftp://example.com/hook", Secrets: []string{"s"}}),
		"relative webhook":   paymentstest.WithWebhook(paymentstest.Webhook{URL: "/hook", Secrets: []string{"s"}}),
		"negative wait":      paymentstest.WithWebhookRetryWait(-time.Second),
		"zero timeout":       paymentstest.WithWebhookTimeout(0),
		"lowercase currency": paymentstest.WithExchangeRate("usd", "NGN", dec("1500")),
		"zero rate":          paymentstest.WithExchangeRate("USD", "NGN", dec("0")),
	} {
		t.Run(name, func(t *testing.T) {
			srv, err := paymentstest.StartServer(opt)
			require.Error(t, err)
			assert.Nil(t, srv)
			assert.Panics(t, func() { paymentstest.NewServer(opt) })
		})
	}
}

func TestClientOptionsOverride(t *testing.T) {
	srv, _ := start(t)
	_, err := srv.NewClient(payments.WithRetries(payments.RetryPolicy{MaxAttempts: -1}))
	require.ErrorIs(t, err, payments.ErrInvalidConfig)
	assert.Panics(t, func() { srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: -1})) })

	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	srv.FailNext(1, http.StatusServiceUnavailable, 0)
	_, err = c.Recipients.Create(ctx(t), recipientParams())
	require.Error(t, err, "no retry when the caller says so")
}

func TestAuthentication(t *testing.T) {
	srv, _ := start(t)
	wrong, err := payments.NewClient("not-the-key", payments.WithBaseURL(srv.URL()))
	require.NoError(t, err)
	_, err = wrong.Recipients.Create(ctx(t), recipientParams())
	require.ErrorIs(t, err, payments.ErrUnauthorized)
	var apiErr *payments.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, "unauthorized", string(apiErr.Code))
	assert.NotEmpty(t, apiErr.Stan)
	assert.Equal(t, 1, apiErr.Attempts, "401 is not retried")

	for name, auth := range map[string]string{
		"missing":      "",
		"wrong scheme": "Basic " + srv.APIKey(),
		"wrong key":    "Bearer " + srv.APIKey() + "x",
		"no token":     "Bearer",
	} {
		t.Run(name, func(t *testing.T) {
			res := send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Authorization": auth})
			assert.Equal(t, http.StatusUnauthorized, res.status)
			assert.False(t, res.env.Success)
			assert.Equal(t, "unauthorized", res.env.Code)
			assert.NotEmpty(t, res.env.Message)
			assert.Contains(t, res.header.Get("WWW-Authenticate"), "Bearer")
		})
	}
	// The scheme is case-insensitive.
	res := send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Authorization": "bearer " + srv.APIKey()})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Empty(t, srv.Recipients())
}

func TestRouting(t *testing.T) {
	srv, c := start(t)
	res := send(t, srv, http.MethodGet, "/payments/nothing", "", nil)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Equal(t, "not_found", res.env.Code)

	res = send(t, srv, http.MethodGet, "/payments/recipients", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Equal(t, "method_not_allowed", res.env.Code)
	assert.Equal(t, http.MethodPost, res.header.Get("Allow"))

	res = send(t, srv, http.MethodPost, "/payments/recipients/"+uuid.NewString(), `{}`, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Equal(t, http.MethodPut, res.header.Get("Allow"))

	res = send(t, srv, http.MethodPut, "/payments/recipients/", `{}`, nil)
	assert.Equal(t, http.StatusNotFound, res.status, "an empty id names nothing")

	_, err := c.Do(ctx(t), http.MethodGet, "/payments/transactions", nil, nil)
	require.ErrorIs(t, err, payments.ErrNotFound, "lists are not part of the specification")
	_, err = c.Do(ctx(t), http.MethodGet, "/payments/recipients/"+uuid.NewString(), nil, nil)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr, "reads are not part of the specification")
	assert.Equal(t, http.StatusMethodNotAllowed, apiErr.StatusCode)
}

func TestMalformedRequests(t *testing.T) {
	srv, _ := start(t)
	for name, body := range map[string]string{
		"truncated":      `{"account_name":`,
		"array":          `[]`,
		"null":           `null`,
		"string":         `"x"`,
		"trailing data":  `{} {}`,
		"trailing comma": `{"a":1,}`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/payments/recipients", "/payments/initiate", "/payments/confirm", "/accounts/virtual-accounts"} {
				res := send(t, srv, http.MethodPost, path, body, nil)
				assert.Equal(t, http.StatusBadRequest, res.status, path)
				assert.Equal(t, "invalid_json", res.env.Code, path)
			}
		})
	}
	res := send(t, srv, http.MethodPost, "/payments/recipients", "", nil)
	assert.Equal(t, http.StatusBadRequest, res.status, "an empty body")

	res = send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Content-Type": "text/plain"})
	assert.Equal(t, http.StatusUnsupportedMediaType, res.status)
	assert.Equal(t, "unsupported_media_type", res.env.Code)

	res = send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Content-Type": "application/json; charset=utf-8"})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, "parameters on the media type are fine")

	big := `{"account_name":"` + strings.Repeat("a", 17<<20) + `"}`
	res = send(t, srv, http.MethodPost, "/payments/recipients", big, nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	assert.Equal(t, "payload_too_large", res.env.Code)
}

// FuzzRequestBodies checks that no body, however odd, gets anything but an
// envelope answer below 500.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"amount":1e1000000000}`, `{"amount":1e-1000000000}`, `{"amount":-0}`, `{"amount":"12.50"}`,
		`{"amount":"abc"}`, `{"amount":true}`, `{"amount":[1]}`, `{"amount_limit":{"x":1}}`,
		`{"identification":"x","payment_details":[]}`, `{"identification":{"identification_image":"%%%"}}`,
		`{"metadata":{"country":7}}`, `{"email":"a@b","account_type":"individual"}`,
		`{"account_number":"\u0000"}`, `{"reference":"` + strings.Repeat("r", 300) + `"}`,
		`{"quote_id":null,"reference":null}`, `{"a":` + strings.Repeat("[", 5000) + `}`,
	} {
		f.Add(seed)
	}
	srv := paymentstest.NewServer()
	defer srv.Close()
	paths := []string{"/payments/recipients", "/payments/initiate", "/payments/confirm", "/accounts/virtual-accounts"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range paths {
			req, err := http.NewRequest(http.MethodPost, srv.URL()+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+srv.APIKey())
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Less(t, resp.StatusCode, 500, "%s %q", path, body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		}
	})
}
