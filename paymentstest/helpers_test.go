package paymentstest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// start runs a server for one test and returns it with a client.
func start(t *testing.T, opts ...paymentstest.Option) (*paymentstest.Server, *payments.Client) {
	t.Helper()
	srv := paymentstest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv, srv.Client()
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func recipientParams() *payments.RecipientCreateParams {
	return &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Lovelace",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
	}
}

func createRecipient(t *testing.T, c *payments.Client, limit string) *payments.Recipient {
	t.Helper()
	p := recipientParams()
	if limit != "" {
		l := payments.Amount{Decimal: dec(limit)}
		p.AmountLimit = &l
	}
	r, err := c.Recipients.Create(ctx(t), p)
	require.NoError(t, err)
	return r
}

func initiate(t *testing.T, c *payments.Client, recipientID, amount, reference string) *payments.Payment {
	t.Helper()
	p, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec(amount)}, Currency: "NGN", RecipientID: recipientID, Reference: reference,
	})
	require.NoError(t, err)
	return p
}

// rawResponse is an answer read without the SDK.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
	env    struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Stan    string          `json:"stan"`
		Code    string          `json:"code"`
		Errors  []fieldError    `json:"errors"`
		Data    json.RawMessage `json:"data"`
	}
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (r *rawResponse) fields() []string {
	var out []string
	for _, f := range r.env.Errors {
		out = append(out, f.Field)
	}
	return out
}

// send makes one plain HTTP request with the server's key, unless headers
// set another Authorization ("" removes it).
func send(t *testing.T, srv *paymentstest.Server, method, path, body string, headers map[string]string) *rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(ctx(t), method, srv.URL()+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := &rawResponse{status: resp.StatusCode, header: resp.Header}
	out.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out.body, &out.env), "body: %s", out.body)
	require.NotEmpty(t, out.env.Stan, "every answer carries a stan")
	return out
}

// stalledReceiver starts a webhook receiver that never answers until the
// request gives up or the test ends, and returns its URL.
func stalledReceiver(t *testing.T) string {
	t.Helper()
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(block) })
	return slow.URL
}
