package paymentstest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdminIgnoresIdempotencyKey(t *testing.T) {
	srv, _ := startAdmin(t)
	h := map[string]string{"Idempotency-Key": "same"}
	for range 2 {
		res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 10}`, h)
		require.Equal(t, http.StatusOK, res.status)
		assert.Empty(t, res.header.Get("Idempotent-Replayed"))
	}
	assert.Equal(t, adminT0.Add(20*time.Second), srv.Now(), "both advances applied")
}

type deliveriesData struct {
	Pending    int `json:"pending"`
	Deliveries []struct {
		EventID   string `json:"event_id"`
		Event     string `json:"event"`
		URL       string `json:"url"`
		Status    string `json:"status"`
		CreatedAt string `json:"created_at"`
		Attempts  []struct {
			At         string `json:"at"`
			StatusCode int    `json:"status_code"`
			Error      string `json:"error"`
			Scheme     string `json:"scheme"`
			Signature  string `json:"signature"`
			DurationMS int64  `json:"duration_ms"`
		} `json:"attempts"`
		Body json.RawMessage `json:"body"`
	} `json:"deliveries"`
}

func TestAdminDeliveries(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	srv, c := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}), paymentstest.WithWebhookRetryWait(time.Millisecond))

	res := send(t, srv, http.MethodGet, "/_sandbox/deliveries", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Contains(t, string(res.env.Data), `"deliveries":[]`, "an empty list, not null")

	createRecipient(t, c, "")
	res = send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", "", nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	d := data[deliveriesData](t, res)
	assert.Zero(t, d.Pending)
	require.Len(t, d.Deliveries, 2)
	first := d.Deliveries[0]
	assert.Equal(t, string(payments.EventRecipientCreated), first.Event)
	assert.Equal(t, "delivered", first.Status)
	assert.Equal(t, rc.URL, first.URL)
	require.Len(t, first.Attempts, 2, "a failure, then a success")
	assert.Equal(t, http.StatusInternalServerError, first.Attempts[0].StatusCode)
	assert.Equal(t, http.StatusOK, first.Attempts[1].StatusCode)
	assert.NotEmpty(t, first.Attempts[1].Signature)
	log := srv.Deliveries()
	assert.Equal(t, log[0].EventID, first.EventID)
	assert.JSONEq(t, string(log[0].Body), string(first.Body), "the webhook body, as JSON")
	ev, err := payments.ParseEvent(first.Body)
	require.NoError(t, err)
	assert.Equal(t, first.EventID, ev.ID)

	res = send(t, srv, http.MethodGet, "/_sandbox/deliveries", "", nil)
	assert.Equal(t, d, data[deliveriesData](t, res))

	for _, body := range []string{`{"timeout_seconds": 0}`, `{"timeout_seconds": -1}`, `{"timeout_seconds": 301}`, `{"timeout_seconds": "x"}`, `{"timeout": 1}`} {
		res := send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, body)
		assert.Len(t, res.fields(), 1, body)
	}
	res = send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", `{"timeout_seconds": 1.5}`, nil)
	assert.Equal(t, http.StatusOK, res.status)
}

func TestAdminWaitIsBounded(t *testing.T) {
	slow := stalledReceiver(t)
	srv, c := startAdmin(t, fastHooks(slow)...)
	createRecipient(t, c, "")

	begin := time.Now()
	res := send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", `{"timeout_seconds": 0.05}`, nil)
	assert.Less(t, time.Since(begin), 5*time.Second)
	assert.Equal(t, http.StatusGatewayTimeout, res.status)
	assert.Equal(t, "deliveries_pending", res.env.Code)
	assert.False(t, res.env.Success)
	d := data[deliveriesData](t, res)
	assert.Equal(t, 2, d.Pending)
	assert.Len(t, d.Deliveries, 2)

	// A client that gives up ends the wait.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(short, http.MethodPost, srv.URL()+"/_sandbox/deliveries/wait", strings.NewReader(`{"timeout_seconds": 60}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	begin = time.Now()
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Close ends a wait too, and does not wait for it.
	var wg sync.WaitGroup
	wg.Add(1)
	var status int
	go func() {
		defer wg.Done()
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/_sandbox/deliveries/wait", strings.NewReader(`{"timeout_seconds": 60}`))
		req.Header.Set("Authorization", "Bearer "+srv.APIKey())
		if resp, err := http.DefaultClient.Do(req); err == nil {
			status = resp.StatusCode
			_ = resp.Body.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	srv.Close()
	wg.Wait()
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Less(t, time.Since(begin), 5*time.Second)
}

func TestAdminLogged(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	srv, _ := startAdmin(t, paymentstest.WithLogger(logger))
	send(t, srv, http.MethodGet, "/_sandbox/clock", "", nil)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	assert.Contains(t, out, `msg="paymentstest: admin request"`)
	assert.Contains(t, out, "path=/_sandbox/clock")
	assert.Contains(t, out, "status=200")
	assert.NotContains(t, out, srv.APIKey())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// FuzzAdminBodies checks that no body makes an admin route panic or answer
// anything but a well-formed envelope.
func FuzzAdminBodies(f *testing.F) {
	for _, seed := range []string{
		`{"seconds": 301}`, `{"duration": "5m1s"}`, `{"amount": 5000.00, "currency": "NGN"}`,
		`{"amount": "1e-99999"}`, `{"kind": "status", "status": 503, "times": 2}`, `{"kind": "latency", "latency_ms": 1}`,
		`{"timeout_seconds": 0.001}`, `{"seconds": -9e18}`, `{"seconds": "NaN"}`, `{"seconds": "-0"}`, `[]`, `{`, "",
		`{"seconds": 1e-18}`, `{"duration": "-9223372036854775808ns"}`, `{"amount": 999999999999999999.999999999999999999}`,
	} {
		f.Add(seed)
	}
	srv := paymentstest.NewServer(paymentstest.WithAdminAPI())
	defer srv.Close()
	va, err := srv.Client().VirtualAccounts.Create(context.Background(), vaParams())
	require.NoError(f, err)
	paths := []string{
		"/_sandbox/clock/advance", "/_sandbox/faults", "/_sandbox/deliveries/wait",
		string("/_sandbox/virtual-accounts/" + va.AccountNumber + "/incoming-payments"),
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range paths {
			res := send(t, srv, http.MethodPost, path, body, nil)
			assert.Contains(t, []int{200, 400, 422}, res.status, "%s %s: %s", path, body, res.body)
			if res.status == http.StatusOK {
				assert.True(t, res.env.Success)
			} else {
				assert.NotEmpty(t, res.env.Code)
			}
		}
		srv.ClearFaults()
	})
}
