package paymentstest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

var adminT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// startAdmin runs a server with the admin API on a fixed base clock.
func startAdmin(t *testing.T, opts ...paymentstest.Option) (*paymentstest.Server, *payments.Client) {
	t.Helper()
	base := []paymentstest.Option{paymentstest.WithAdminAPI(), paymentstest.WithClock(func() time.Time { return adminT0 })}
	return start(t, append(base, opts...)...)
}

// data decodes the data member of an answer.
func data[T any](t *testing.T, res *rawResponse) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(res.env.Data, &v), "data: %s", res.env.Data)
	return v
}

type clockData struct {
	Now string `json:"now"`
}

func adminNow(t *testing.T, res *rawResponse) time.Time {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	now, err := time.Parse(time.RFC3339, data[clockData](t, res).Now)
	require.NoError(t, err)
	return now
}

func TestAdminOffByDefault(t *testing.T) {
	srv, _ := start(t)
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/_sandbox/clock", ""},
		{http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 301}`},
		{http.MethodPost, "/_sandbox/faults", `{"kind": "drop"}`},
		{http.MethodGet, "/_sandbox/deliveries", ""},
	} {
		before := srv.Now()
		res := send(t, srv, tc.method, tc.path, tc.body, nil)
		assert.Equal(t, http.StatusNotFound, res.status, tc.path)
		assert.Equal(t, string(payments.CodeNotFound), res.env.Code)
		assert.False(t, res.env.Success)
		assert.Less(t, srv.Now().Sub(before), time.Minute, "the clock did not move")
	}
	assert.Zero(t, srv.PendingFaults())
	assert.Len(t, srv.Requests(), 4, "like any unknown path, they are service requests")
}

func TestAdminAuth(t *testing.T) {
	srv, _ := startAdmin(t)
	routes := []struct{ method, path string }{
		{http.MethodGet, "/_sandbox/clock"},
		{http.MethodPost, "/_sandbox/clock/advance"},
		{http.MethodPost, "/_sandbox/virtual-accounts/0123456789/incoming-payments"},
		{http.MethodGet, "/_sandbox/faults"},
		{http.MethodPost, "/_sandbox/faults"},
		{http.MethodDelete, "/_sandbox/faults"},
		{http.MethodGet, "/_sandbox/deliveries"},
		{http.MethodPost, "/_sandbox/deliveries/wait"},
		{http.MethodGet, "/_sandbox/webhook-retries"},
		{http.MethodPut, "/_sandbox/webhook-retries"},
		{http.MethodPost, "/_sandbox/events/redeliver-failed"},
		{http.MethodPost, "/_sandbox/events/some-id/redeliver"},
		{http.MethodGet, "/_sandbox/nope"},
	}
	for _, r := range routes {
		for name, auth := range map[string]string{"missing": "", "wrong key": "Bearer nope", "basic": "Basic " + srv.APIKey()} {
			res := send(t, srv, r.method, r.path, `{"seconds": 3600}`, map[string]string{"Authorization": auth})
			assert.Equal(t, http.StatusUnauthorized, res.status, "%s %s, %s", r.method, r.path, name)
			assert.Equal(t, string(payments.CodeUnauthorized), res.env.Code)
			assert.NotEmpty(t, res.header.Get("WWW-Authenticate"))
		}
	}
	assert.Equal(t, adminT0, srv.Now(), "nothing was done")
}

func TestAdminClock(t *testing.T) {
	srv, _ := startAdmin(t)
	assert.Equal(t, adminT0, adminNow(t, send(t, srv, http.MethodGet, "/_sandbox/clock", "", nil)))

	res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 301}`, nil)
	assert.True(t, res.env.Success)
	assert.NotEmpty(t, res.env.Message)
	assert.Equal(t, adminT0.Add(301*time.Second), adminNow(t, res))
	assert.Equal(t, adminT0.Add(301*time.Second), srv.Now())

	for body, want := range map[string]time.Duration{
		`{"duration": "5m1s"}`:                 5*time.Minute + time.Second,
		`{"seconds": "60"}`:                    time.Minute,
		`{"seconds": 0.25}`:                    250 * time.Millisecond,
		`{"seconds": -1.5}`:                    -1500 * time.Millisecond,
		`{"duration": "-1h"}`:                  -time.Hour,
		`{"seconds": 0}`:                       0,
		`{"seconds": 1e2}`:                     100 * time.Second,
		`{"seconds": 86400.5}`:                 24*time.Hour + 500*time.Millisecond,
		`{"seconds": null, "duration": "1ms"}`: time.Millisecond,
	} {
		before := srv.Now()
		// No Content-Type, as curl -d sends it, is fine.
		res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", body,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		assert.Equal(t, before.Add(want), adminNow(t, res), body)
	}

	before := srv.Now()
	for body, field := range map[string]string{
		`{}`:                                   "seconds",
		`{"seconds": "5m1s"}`:                  "seconds",
		`{"seconds": "soon"}`:                  "seconds",
		`{"seconds": true}`:                    "seconds",
		`{"seconds": 1e999999999}`:             "seconds",
		`{"seconds": 0.1e-999999999}`:          "seconds",
		`{"seconds": 1e10}`:                    "seconds",
		`{"seconds": 3153600001}`:              "seconds",
		`{"duration": "5 minutes"}`:            "duration",
		`{"duration": 300}`:                    "duration",
		`{"duration": "1000000h"}`:             "duration",
		`{"duration": "99999999999999999h"}`:   "duration",
		`{"seconds": 1, "duration": "1s"}`:     "duration",
		`{"seconds": 1, "secs": 2}`:            "secs",
		`{"seconds": 3000000000, "extra": {}}`: "extra",
	} {
		res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, body)
		assert.Equal(t, string(payments.CodeValidationFailed), res.env.Code, body)
		assert.Contains(t, res.fields(), field, body)
		assert.Contains(t, res.env.Message, field, body)
	}
	assert.Equal(t, before, srv.Now(), "a refused advance moves nothing")

	// Each step is bounded, and so is the total.
	res = send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 3000000000}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	res = send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 3000000000}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, []string{"seconds"}, res.fields())
	res = send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"duration": "-833333h"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)

	for _, body := range []string{"", "not json", "[1]", "null", `{"seconds": 1} {}`} {
		res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", body, nil)
		assert.Equal(t, http.StatusBadRequest, res.status, body)
		assert.Equal(t, string(payments.CodeInvalidJSON), res.env.Code, body)
	}

	res = send(t, srv, http.MethodPut, "/_sandbox/clock", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Equal(t, "GET", res.header.Get("Allow"))
	res = send(t, srv, http.MethodPut, "/_sandbox/faults", "", nil)
	assert.Equal(t, "DELETE, GET, POST", res.header.Get("Allow"))
	for _, path := range []string{"/_sandbox", "/_sandbox/", "/_sandbox/clock/", "/_sandbox/time", "/_sandbox/virtual-accounts//incoming-payments"} {
		res := send(t, srv, http.MethodGet, path, "", nil)
		assert.Equal(t, http.StatusNotFound, res.status, path)
		assert.Equal(t, string(payments.CodeNotFound), res.env.Code, path)
	}
	assert.Empty(t, srv.Requests(), "admin requests are not service requests")
}

func TestAdminAdvanceExpiresQuote(t *testing.T) {
	srv, c := startAdmin(t, paymentstest.WithClock(time.Now))
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "50", "order-admin-1")
	res := send(t, srv, http.MethodPost, "/_sandbox/clock/advance", `{"seconds": 301}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)

	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.ErrorIs(t, err, payments.CodeQuoteExpired)
	stored, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusPending, stored.Status)

	// A quote issued after the advance is good.
	p = initiate(t, c, r.ID, "50", "order-admin-2")
	done, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
}

type incomingData struct {
	ID               string `json:"id"`
	Reference        string `json:"reference"`
	Amount           string `json:"amount"`
	Currency         string `json:"currency"`
	VirtualAccountID string `json:"virtual_account_id"`
	AccountNumber    string `json:"account_number"`
}

func TestAdminIncomingPayment(t *testing.T) {
	rc := newReceiver(t, nil)
	// The wall clock, so that the SDK accepts the signatures.
	srv, c := startAdmin(t, append(fastHooks(rc.URL), paymentstest.WithClock(time.Now))...)
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	path := "/_sandbox/virtual-accounts/" + va.AccountNumber + "/incoming-payments"

	res := send(t, srv, http.MethodPost, string(path), `{"amount": 1234567890.123456789, "currency": "NGN"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.True(t, res.env.Success)
	assert.Contains(t, string(res.env.Data), `"amount":"1234567890.123456789"`, "exact digits, as a string")
	in := data[incomingData](t, res)
	assert.Equal(t, "NGN", in.Currency)
	assert.Equal(t, va.ID, in.VirtualAccountID)
	assert.Equal(t, string(va.AccountNumber), in.AccountNumber)

	stored := srv.IncomingPayments()
	require.Len(t, stored, 1)
	assert.Equal(t, "1234567890.123456789", stored[0].Amount.String())
	assert.Equal(t, in.ID, stored[0].ID)

	// The webhook fires, as with SimulateIncomingPayment.
	waitDeliveries(t, srv)
	got := rc.deliveries()
	last := got[len(got)-1]
	ev, err := webhook.ConstructEvent(last.body, last.header, secret)
	require.NoError(t, err)
	assert.Equal(t, payments.EventVirtualAccountPaymentReceived, ev.Type)
	vp, err := ev.VirtualAccountPayment()
	require.NoError(t, err)
	assert.True(t, vp.Amount.Equal(dec("1234567890.123456789")))
	assert.Equal(t, "1234567890.123456789", vp.Amount.String())
	assert.Equal(t, in.Reference, vp.Reference)

	// A string amount, and no currency (the account's).
	res = send(t, srv, http.MethodPost, string(path), `{"amount": "5000.00"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.Equal(t, "5000.00", data[incomingData](t, res).Amount)
	assert.Equal(t, "NGN", data[incomingData](t, res).Currency)

	for body, field := range map[string]string{
		`{}`:                                "amount",
		`{"amount": null}`:                  "amount",
		`{"amount": 0}`:                     "amount",
		`{"amount": -5}`:                    "amount",
		`{"amount": "lots"}`:                "amount",
		`{"amount": 1e40}`:                  "amount",
		`{"amount": 1e-999999999}`:          "amount",
		`{"amount": 0.0000000000000000001}`: "amount",
		`{"amount": true}`:                  "amount",
		`{"amount": 5, "currency": "USD"}`:  "currency",
		`{"amount": 5, "currency": "ngn"}`:  "currency",
		`{"amount": 5, "currency": 566}`:    "currency",
		`{"amount": 5, "payer": "x"}`:       "payer",
	} {
		res := send(t, srv, http.MethodPost, string(path), body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, body)
		assert.Equal(t, []string{field}, res.fields(), body)
	}
	res = send(t, srv, http.MethodPost, "/_sandbox/virtual-accounts/0000000000/incoming-payments", `{"amount": 5}`, nil)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Equal(t, string(payments.CodeNotFound), res.env.Code)
	assert.Contains(t, res.env.Message, "0000000000")
	res = send(t, srv, http.MethodPost, "/_sandbox/virtual-accounts/00%2F00/incoming-payments", `{"amount": 5}`, nil)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Contains(t, res.env.Message, `"00/00"`, "the account number is unescaped")
	res = send(t, srv, http.MethodGet, string(path), "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Len(t, srv.IncomingPayments(), 2, "refused requests recorded nothing")
}

type faultsData struct {
	Fault *struct {
		Kind              string `json:"kind"`
		Status            int    `json:"status"`
		RetryAfterSeconds int    `json:"retry_after_seconds"`
		LatencyMS         int    `json:"latency_ms"`
		Times             int    `json:"times"`
		Method            string `json:"method"`
		Path              string `json:"path"`
	} `json:"fault"`
	Pending  int `json:"pending"`
	Injected int `json:"injected"`
}

func TestAdminFaultIsRetriedBySDK(t *testing.T) {
	srv, c := startAdmin(t)
	r := createRecipient(t, c, "")
	res := send(t, srv, http.MethodPost, "/_sandbox/faults",
		`{"kind": "status", "status": 503, "retry_after_seconds": 1, "times": 2, "method": "post", "path": "/payments/initiate"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	f := data[faultsData](t, res)
	require.NotNil(t, f.Fault)
	assert.Equal(t, "status", f.Fault.Kind)
	assert.Equal(t, 503, f.Fault.Status)
	assert.Equal(t, 1, f.Fault.RetryAfterSeconds)
	assert.Equal(t, 2, f.Fault.Times)
	assert.Equal(t, "POST", f.Fault.Method, "normalised")
	assert.Equal(t, "/payments/initiate", f.Fault.Path)
	assert.Equal(t, 2, f.Pending)
	assert.Equal(t, 2, srv.PendingFaults())

	// Admin requests are never faulted, even by a fault that matches them.
	res = send(t, srv, http.MethodPost, "/_sandbox/faults", `{"kind": "drop", "method": "GET"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.Equal(t, 3, data[faultsData](t, res).Pending)

	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-admin-f"))
	require.NoError(t, err)
	assert.Equal(t, 3, p.LastResponse().Attempts, "two 503s, then the work")
	assert.Len(t, srv.PaymentsByReference("order-admin-f"), 1)

	res = send(t, srv, http.MethodGet, "/_sandbox/faults", "", nil)
	f = data[faultsData](t, res)
	assert.Nil(t, f.Fault)
	assert.Equal(t, 1, f.Pending)
	assert.Equal(t, 2, f.Injected)

	res = send(t, srv, http.MethodDelete, "/_sandbox/faults", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Zero(t, data[faultsData](t, res).Pending)
	assert.Zero(t, srv.PendingFaults())

	for _, rec := range srv.Requests() {
		assert.False(t, strings.HasPrefix(rec.Path, paymentstest.AdminPrefix), "admin request %s in the log", rec.Path)
	}
}

func TestAdminFaultKinds(t *testing.T) {
	srv, c := startAdmin(t)
	c0 := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	r := createRecipient(t, c, "")

	res := send(t, srv, http.MethodPost, "/_sandbox/faults", `{"kind": "drop", "path": "/accounts/virtual-accounts"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.Equal(t, 1, data[faultsData](t, res).Fault.Times, "times defaults to 1")
	_, err := c0.VirtualAccounts.Create(ctx(t), vaParams())
	var tErr *payments.TransportError
	require.ErrorAs(t, err, &tErr)
	assert.Empty(t, srv.VirtualAccounts(), "dropped before the work")

	res = send(t, srv, http.MethodPost, "/_sandbox/faults", `{"kind": "drop_after_work", "path": "/payments/initiate"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	_, err = c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-admin-w"))
	require.NoError(t, err, "retried with the same key, the stored answer is replayed")
	assert.Len(t, srv.PaymentsByReference("order-admin-w"), 1)
	assert.Equal(t, "drop_after_work", srv.Requests()[len(srv.Requests())-2].Fault)

	res = send(t, srv, http.MethodPost, "/_sandbox/faults", `{"kind": "latency", "latency_ms": 60}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	begin := time.Now()
	_, err = c0.Recipients.Create(ctx(t), recipientParams())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(begin), 60*time.Millisecond)

	// SetLatency does not slow the admin API down either.
	srv.SetLatency(time.Hour)
	res = send(t, srv, http.MethodGet, "/_sandbox/clock", "", nil)
	assert.Equal(t, http.StatusOK, res.status)
	srv.SetLatency(0)

	for body, field := range map[string]string{
		`{}`:                                           "kind",
		`{"kind": "boom"}`:                             "kind",
		`{"kind": 1}`:                                  "kind",
		`{"kind": "status"}`:                           "status",
		`{"kind": "status", "status": 200}`:            "status",
		`{"kind": "status", "status": 503.5}`:          "status",
		`{"kind": "status", "status": "x"}`:            "status",
		`{"kind": "drop", "status": 503}`:              "status",
		`{"kind": "latency"}`:                          "latency_ms",
		`{"kind": "latency", "latency_ms": 0}`:         "latency_ms",
		`{"kind": "latency", "latency_ms": 1e12}`:      "latency_ms",
		`{"kind": "drop", "latency_ms": 5}`:            "latency_ms",
		`{"kind": "drop", "retry_after_seconds": 1}`:   "retry_after_seconds",
		`{"kind": "drop", "times": 0}`:                 "times",
		`{"kind": "drop", "times": 1e9}`:               "times",
		`{"kind": "drop", "method": "PO ST"}`:          "method",
		`{"kind": "drop", "path": "payments"}`:         "path",
		`{"kind": "drop", "path": "/p?x=1"}`:           "path",
		`{"kind": "drop", "path": "/_sandbox/clock"}`:  "path",
		`{"kind": "drop", "seed": 1}`:                  "seed",
		`{"kind": "status", "status": 503, "rate": 1}`: "rate",
	} {
		res := send(t, srv, http.MethodPost, "/_sandbox/faults", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, body)
		assert.Contains(t, res.fields(), field, body)
	}
	assert.Zero(t, srv.PendingFaults(), "refused faults inject nothing")
}
