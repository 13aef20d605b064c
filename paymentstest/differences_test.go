package paymentstest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// wire is one answer as bytes, with its JSON decoded loosely (numbers kept
// as written) when it is JSON.
type wire struct {
	status int
	header http.Header
	body   []byte
	obj    map[string]any
}

func (w *wire) data() map[string]any {
	d, _ := w.obj["data"].(map[string]any)
	return d
}

func sendWire(t *testing.T, srv *paymentstest.Server, method, path, body string, headers ...string) *wire {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, srv.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	w := &wire{status: resp.StatusCode, header: resp.Header}
	w.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(w.body))
	d.UseNumber()
	_ = d.Decode(&w.obj)
	return w
}

// initiateWire creates a recipient and initiates 100.00 NGN to it, on the
// wire.
func initiateWire(t *testing.T, srv *paymentstest.Server) *wire {
	t.Helper()
	r := sendWire(t, srv, "POST", "/payments/recipients",
		`{"account_number":"0123456789","account_name":"Ada Lovelace","account_type":"individual","account_currency":"NGN"}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	id := r.data()["id"].(string)
	p := sendWire(t, srv, "POST", "/payments/initiate",
		`{"amount":100,"currency":"NGN","recipient_id":"`+id+`","reference":"ref-`+id[:8]+`"}`, "Idempotency-Key", "k-"+id)
	require.Equal(t, http.StatusOK, p.status, "%s", p.body)
	return p
}

func TestWithDifferencesUnknownName(t *testing.T) {
	_, err := paymentstest.StartServer(paymentstest.WithDifferences("quote-flat", "quote-sideways"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `WithDifferences("quote-sideways"): unknown difference; known: confirm-path, quote-flat`)
}

// TestWithDifferencesNone: without differences the answers are the
// assumed ones (the other tests of the package hold them in detail).
func TestWithDifferencesNone(t *testing.T) {
	srv, _ := start(t)
	p := initiateWire(t, srv).data()
	q := p["quote"].(map[string]any)
	assert.Equal(t, "100.00", p["amount"])
	assert.Equal(t, "pending", p["status"])
	assert.Contains(t, q, "fee")
	assert.Contains(t, q, "total_amount")
	assert.NotContains(t, p, "completed_at")
}

func TestWithDifferencesPayments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, p map[string]any)
	}{
		{"quote-flat", func(t *testing.T, p map[string]any) {
			assert.NotContains(t, p, "quote")
			assert.Contains(t, p, "quote_id")
			assert.Contains(t, p, "fee")
			assert.Contains(t, p, "total_amount")
			assert.Equal(t, "100.00", p["amount"])
		}},
		{"quote-renamed", func(t *testing.T, p map[string]any) {
			q := p["quote"].(map[string]any)
			assert.NotContains(t, q, "fee")
			assert.NotContains(t, q, "total_amount")
			assert.Contains(t, q, "fee_amount")
			assert.Contains(t, q, "total")
		}},
		{"completed-at", func(t *testing.T, p map[string]any) {
			assert.Contains(t, p, "completed_at")
			assert.Nil(t, p["completed_at"])
		}},
		{"status-processing", func(t *testing.T, p map[string]any) {
			assert.Equal(t, "processing", p["status"])
		}},
		{"minor-units", func(t *testing.T, p map[string]any) {
			assert.Equal(t, json.Number("10000"), p["amount"])
			assert.Equal(t, json.Number("10000"), p["quote"].(map[string]any)["amount"])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := start(t, paymentstest.WithDifferences(tc.name))
			tc.check(t, initiateWire(t, srv).data())
		})
	}
}

func TestWithDifferencesConfirmPath(t *testing.T) {
	srv, _ := start(t, paymentstest.WithDifferences("confirm-path"))
	old := sendWire(t, srv, "POST", "/payments/confirm", `{}`, "Idempotency-Key", "k1")
	assert.Equal(t, http.StatusNotFound, old.status)
	assert.Equal(t, "no such endpoint: /payments/confirm", old.obj["message"])
	moved := sendWire(t, srv, "POST", "/payments/quotes/confirm", `{}`, "Idempotency-Key", "k2")
	assert.Equal(t, http.StatusUnprocessableEntity, moved.status, "the operation is there: it validates the body")
}

func TestWithDifferencesErrors(t *testing.T) {
	t.Run("html-errors", func(t *testing.T) {
		srv, _ := start(t, paymentstest.WithDifferences("html-errors"))
		w := sendWire(t, srv, "POST", "/payments/initiate", `{}`)
		assert.Equal(t, http.StatusUnprocessableEntity, w.status)
		assert.Equal(t, "text/html; charset=utf-8", w.header.Get("Content-Type"))
		assert.True(t, bytes.HasPrefix(w.body, []byte("<html>")), "%s", w.body)
		ok := sendWire(t, srv, "POST", "/payments/recipients",
			`{"account_number":"0123456789","account_name":"A","account_type":"individual","account_currency":"NGN"}`)
		assert.Equal(t, "application/json", ok.header.Get("Content-Type"), "success stays JSON")
	})
	t.Run("numeric-codes", func(t *testing.T) {
		srv, _ := start(t, paymentstest.WithDifferences("numeric-codes"))
		w := sendWire(t, srv, "POST", "/payments/initiate", `{}`)
		code, isNumber := w.obj["code"].(json.Number)
		assert.True(t, isNumber, "code %#v", w.obj["code"])
		assert.NotEmpty(t, code)
		assert.IsType(t, []any{}, w.obj["errors"], "field problems keep their shape")
	})
	t.Run("field-errors", func(t *testing.T) {
		srv, _ := start(t, paymentstest.WithDifferences("field-errors"))
		w := sendWire(t, srv, "POST", "/payments/initiate", `{}`)
		assert.Equal(t, "validation_failed", w.obj["code"])
		fields := w.obj["errors"].(map[string]any)["fields"].([]any)
		require.NotEmpty(t, fields)
		assert.Contains(t, fields[0], "name")
		assert.Contains(t, fields[0], "reason")
	})
}

func TestWithDifferencesListCursor(t *testing.T) {
	srv, c := start(t, paymentstest.WithDifferences("list-cursor"), paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/hooks", Secrets: []string{"whsec_x"}}))
	srv.PauseDeliveries()
	for range 3 {
		_, err := c.Webhooks.Trigger(ctx(t), payments.EventAccountUpdated)
		require.NoError(t, err)
	}
	first := sendWire(t, srv, "GET", "/webhooks/events?limit=2", "")
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	d := first.data()
	assert.NotContains(t, d, "has_more")
	evs := d["events"].([]any)
	require.Len(t, evs, 2)
	assert.Equal(t, evs[1].(map[string]any)["id"], d["next_cursor"])

	next := sendWire(t, srv, "GET", "/webhooks/events?limit=2&cursor="+d["next_cursor"].(string), "")
	assert.Len(t, next.data()["events"], 1)
	assert.Nil(t, next.data()["next_cursor"])

	unknown := sendWire(t, srv, "GET", "/webhooks/events?after=0b6c6a0e-0000-4000-8000-000000000000", "")
	assert.Equal(t, http.StatusOK, unknown.status, "after is ignored")
}

func TestWithDifferencesWebhooks(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	srv, c := start(t, paymentstest.WithDifferences("signature-header", "test-marker", "status-processing"),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: recv.URL, Secrets: []string{"whsec_secret"}}))
	_, err := c.Webhooks.Trigger(ctx(t), payments.EventPaymentInitiated)
	require.NoError(t, err)
	require.NoError(t, srv.WaitForDeliveries(ctx(t)))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	assert.Empty(t, got[0].Header.Get(webhook.SignatureHeader))
	assert.Equal(t, webhook.SignPayload(bodies[0], timeOf(t, got[0].Header.Get("X-Signature")), "whsec_secret"),
		got[0].Header.Get("X-Signature"), "the same signature, in another header")
	var ev struct {
		Data struct {
			Reference, Status string
		}
	}
	require.NoError(t, json.Unmarshal(bodies[0], &ev))
	assert.True(t, strings.HasPrefix(ev.Data.Reference, "sandbox_test_"), ev.Data.Reference)
	assert.Equal(t, "processing", ev.Data.Status)
	assert.Equal(t, bodies[0], srv.Events()[0].Body, "the list of events and the delivery agree")
}

// timeOf reads t= of a Payments-Signature value.
func timeOf(t *testing.T, sig string) time.Time {
	t.Helper()
	for _, part := range strings.Split(sig, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return time.Unix(n, 0)
		}
	}
	t.Fatalf("no t= in %q", sig)
	return time.Time{}
}
