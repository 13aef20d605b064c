package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// summaries returns the "reconcile finished" lines of logs.
func summaries(t *testing.T, logs *testlog.Buffer) []map[string]any {
	t.Helper()
	lines, err := logs.JSONLines()
	require.NoError(t, err)
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == "reconcile finished" {
			out = append(out, l)
		}
	}
	return out
}

// waitSummaries waits until logs hold n "reconcile finished" lines, and
// returns them.
func waitSummaries(t *testing.T, logs *testlog.Buffer, n int) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s := summaries(t, logs); len(s) >= n {
			return s
		}
	}
	t.Fatalf("fewer than %d reconcile runs:\n%s", n, logs)
	return nil
}

// makePayments makes n payments on srv, each completed at once: 2n events,
// plus the recipient's 2.
func makePayments(t *testing.T, srv *paymentstest.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.Client()
	rc, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789",
		AccountName: "Ada Lovelace", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	require.NoError(t, err)
	for i := range n {
		p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString("250.00")},
			Currency: "NGN", RecipientID: rc.ID, Reference: fmt.Sprintf("order-%d", i)})
		require.NoError(t, err)
		_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
		require.NoError(t, err)
	}
}

// The receiver is stopped while payments complete, so that every delivery
// fails; started again with reconcile on, it logs each missed event as
// recovered, once, and none of the events it had processed before. The
// sender's redeliveries of the missed events then find them done.
func TestReconcileRecoversWhatTheReceiverMissed(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond}}),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{testSecret}}), paymentstest.WithSandbox(paymentstest.Sandbox{}))
	defer srv.Close()
	store := storeURL(t, "redis", randomName("reconcile-"), func() []string { return eventIDs(srv) })
	a := startReceiver(t, map[string]string{envSecret: testSecret, envStore: store})
	setWebhookURL(t, srv, a.url+"/webhooks")
	makeEvents(t, srv)
	before := eventIDs(srv)
	require.Len(t, a.processed(t), len(before))
	require.NoError(t, a.stop())

	makePayments(t, srv, 5)
	require.NoError(t, srv.WaitForDeliveries(context.Background()))
	missed := eventIDs(srv)[len(before):]
	require.Len(t, missed, 12)
	for _, d := range srv.Deliveries()[len(before):] {
		require.Equal(t, paymentstest.DeliveryFailed, d.Status, "event %s: the receiver was down", d.EventID)
	}

	t.Setenv("PAYMENTS_API_KEY", srv.APIKey())
	t.Setenv("PAYMENTS_BASE_URL", srv.URL())
	b := startReceiver(t, map[string]string{envSecret: testSecret, envStore: store, envReconcileEvery: "1h"})
	sum := waitSummaries(t, b.logs, 1)[0]
	for k, v := range map[string]any{"recovered": 12.0, "already_done": 3.0, "failed": 0.0, "in_progress": 0.0} {
		assert.Equal(t, v, sum[k], k)
	}
	recovered := b.logged(t, "event recovered by reconcile")
	assert.Len(t, recovered, len(missed))
	for _, id := range missed {
		assert.Equal(t, 1, recovered[id], "missed event %s", id)
	}
	for _, id := range before {
		assert.Zero(t, recovered[id], "event %s was processed before the restart", id)
	}
	assert.Equal(t, 5, strings.Count(b.logs.String(), `"status":"completed"`), "each payment.completed ran the function once")

	setWebhookURL(t, srv, b.url+"/webhooks")
	var redeliveredJSON struct {
		EventIDs []string `json:"event_ids"`
	}
	admin(t, srv, http.MethodPost, "events/redeliver-failed", nil, &redeliveredJSON)
	redelivered := redeliveredJSON.EventIDs
	require.Len(t, redelivered, len(missed))
	require.NoError(t, srv.WaitForDeliveries(context.Background()))
	for _, d := range srv.Deliveries() {
		if d.Redelivery {
			assert.Equal(t, paymentstest.DeliveryDelivered, d.Status, "redelivery of %s", d.EventID)
		}
	}
	assert.Empty(t, b.processed(t), "the redeliveries found every event done")
	require.NoError(t, b.stop())
}

// testReconciler starts reconcile every every over srv's events, with a
// handler of its own over a memory store, and returns its logs and the
// function that stops it.
func testReconciler(t *testing.T, srv *paymentstest.Server, every time.Duration) (*testlog.Buffer, func()) {
	t.Helper()
	logs := new(testlog.Buffer)
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	verifier, err := webhook.NewSignatureVerifier([]string{testSecret})
	require.NoError(t, err)
	hooks := webhook.NewHandler(verifier, (&receiver{logger: logger}).handle, webhook.WithLogger(logger))
	stopCtx := startReconcile(context.Background(), hooks, reconcileConfig{every: every, window: time.Hour, client: srv.Client()}, logger)
	stop := func() { stopCtx(context.Background()) }
	t.Cleanup(stop)
	return logs, stop
}

// Stopping waits for a run only as long as its context allows: a function
// that ignores its cancelled context does not hold the shutdown.
func TestReconcileStopIsBounded(t *testing.T) {
	srv := paymentstest.NewServer() // no webhook URL: every event is missed
	defer srv.Close()
	makePayments(t, srv, 1)
	logs := new(testlog.Buffer)
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	verifier, err := webhook.NewSignatureVerifier([]string{testSecret})
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hooks := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error {
		once.Do(func() { close(entered) })
		<-release // ignores its context
		return nil
	}, webhook.WithLogger(logger))
	defer close(release)
	stop := startReconcile(context.Background(), hooks, reconcileConfig{every: time.Hour, window: time.Hour, client: srv.Client()}, logger)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	stop(ctx)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Contains(t, logs.String(), "reconcile still running at shutdown")
}

// Reconcile runs at start, then every PAYMENTS_RECONCILE_EVERY; a later run
// lists from where the last one got to, so it finds only the new events.
func TestReconcileRunsEveryInterval(t *testing.T) {
	srv := paymentstest.NewServer() // no webhook URL: every event is missed
	defer srv.Close()
	makePayments(t, srv, 1)
	logs, stop := testReconciler(t, srv, 50*time.Millisecond)
	first := waitSummaries(t, logs, 1)[0]
	assert.Equal(t, 4.0, first["recovered"])
	_, err := srv.Client().VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example"})
	require.NoError(t, err)
	ids := eventIDs(srv)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(logs.String(), ids[len(ids)-1]) {
			break
		}
	}
	stop()
	var recovered, already float64
	for _, s := range summaries(t, logs) {
		recovered += s["recovered"].(float64)
		already += s["already_done"].(float64)
	}
	assert.Equal(t, 5.0, recovered, "each event once:\n%s", logs)
	assert.Zero(t, already, "each run listed from the last one's checkpoint")
	assert.Contains(t, logs.String(), `"msg":"event recovered by reconcile","event_id":"`+ids[len(ids)-1])
}

// A service without the list of events (404) turns reconcile off, with one
// warning, and no further request.
func TestReconcileTurnedOffWithoutTheListOperation(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusNotFound,
		Method: http.MethodGet, Path: "/webhooks/events", Times: 100}))
	logs, _ := testReconciler(t, srv, 20*time.Millisecond)
	waitSummaries(t, logs, 1)
	time.Sleep(200 * time.Millisecond) // ten intervals
	assert.Equal(t, 1, strings.Count(logs.String(), "reconcile turned off"), "%s", logs)
	assert.Len(t, summaries(t, logs), 1, "no run after the 404")
	assert.Equal(t, 1, faultsInjected(srv), "one list request")
}

// Stopping (SIGTERM) ends a run at once, even one waiting on the service.
func TestReconcileStopsAtOnce(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{})) // the admin API counts the faults pending
	defer srv.Close()
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Latency: time.Minute,
		Method: http.MethodGet, Path: "/webhooks/events"}))
	logs, stop := testReconciler(t, srv, time.Hour)
	var faults struct {
		Pending int `json:"pending"`
	}
	admin(t, srv, http.MethodGet, "faults", nil, &faults)
	for deadline := time.Now().Add(10 * time.Second); faults.Pending > 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		admin(t, srv, http.MethodGet, "faults", nil, &faults)
	}
	require.Zero(t, faults.Pending, "the listing did not start")
	start := time.Now()
	stop()
	assert.Less(t, time.Since(start), 5*time.Second)
	sum := summaries(t, logs)
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0]["error"], "context canceled")
}

func TestParseReconcile(t *testing.T) {
	t.Setenv("PAYMENTS_API_KEY", "sk_test_reconcile")
	t.Setenv("PAYMENTS_BASE_URL", "https://api.payments.example")
	rc, err := parseReconcile("", "", "memory")
	require.NoError(t, err)
	assert.Zero(t, rc, "off by default, with no client")
	rc, err = parseReconcile(" 10m ", "", "redis")
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, rc.every)
	assert.Equal(t, 24*time.Hour, rc.window)
	assert.NotNil(t, rc.client)
	rc, err = parseReconcile("0", "2h", "postgres")
	require.NoError(t, err)
	assert.Zero(t, rc.every)

	for name, c := range map[string]struct {
		every, window, store string
		want                 []string
	}{
		"not a duration":   {"soon", "", "redis", []string{`PAYMENTS_RECONCILE_EVERY="soon": give a duration`}},
		"negative":         {"-1m", "", "redis", []string{`PAYMENTS_RECONCILE_EVERY="-1m"`}},
		"window too long":  {"10m", "200h", "redis", []string{`PAYMENTS_RECONCILE_WINDOW="200h": give a duration from 1s to 168h0m0s`}},
		"window zero":      {"10m", "0", "postgres", []string{`PAYMENTS_RECONCILE_WINDOW="0"`}},
		"the memory store": {"10m", "", "memory", []string{"PAYMENTS_RECONCILE_EVERY needs PAYMENTS_WEBHOOK_STORE", "every event of the last 24h0m0s"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseReconcile(c.every, c.window, c.store)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	t.Setenv("PAYMENTS_API_KEY", "")
	_, err = loadConfig(environment{Secret: "s", Store: "redis://db:6379/0", ReconcileEvery: "5m"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PAYMENTS_RECONCILE_EVERY is set: reconcile lists the service's events with PAYMENTS_API_KEY")
}
