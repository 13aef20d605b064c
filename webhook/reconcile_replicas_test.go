package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/admintest"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// The receiver is down while 200 payments complete: every delivery fails
// after its retries. Then three replicas (three handlers over one store)
// reconcile at once while the sender redelivers every failed event to
// them: each event's function succeeds exactly once, by one path or the
// other, and a later reconcile finds everything done.
func TestReconcileRecoversEventsWhoseDeliveriesAllFailed(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 200 payments")
	}
	const secret = "whsec_reconcile_test"
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer down.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: down.URL, Secrets: []string{secret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond}}),
		paymentstest.WithSandbox(paymentstest.Sandbox{})) // the admin API moves the URL and redelivers
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := srv.Client()
	rc, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789",
		AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	require.NoError(t, err)
	for i := range 200 {
		p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString("100.00")},
			Currency: "NGN", RecipientID: rc.ID, Reference: fmt.Sprintf("order-%d", i)})
		require.NoError(t, err)
		_, err = client.Payments.Confirm(ctx, p.ConfirmParams())
		require.NoError(t, err)
	}
	require.NoError(t, srv.WaitForDeliveries(ctx))
	events := srv.Events()
	require.Len(t, events, 402, "recipient.created, recipient.verified, 200 payment.initiated, 200 payment.completed")
	for _, d := range srv.Deliveries() {
		require.Equal(t, paymentstest.DeliveryFailed, d.Status, "event %s: the receiver was down", d.EventID)
	}

	store := webhook.NewMemoryClaimStore(0)
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	var mu sync.Mutex
	calls := map[string]int{} // by event id
	fn := func(_ context.Context, ev *payments.Event) error {
		time.Sleep(time.Millisecond) // long enough for deliveries and reconciles to meet
		mu.Lock()
		defer mu.Unlock()
		calls[ev.ID]++
		return nil
	}
	logs := new(testlog.Buffer)
	replicas := make([]*webhook.Handler, 3)
	for i := range replicas {
		replicas[i] = webhook.NewHandler(verifier, fn, webhook.WithClaimStore(store),
			webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	}
	var next atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // the network: reconcile, in process, overtakes the redeliveries
		replicas[next.Add(1)%3].ServeHTTP(w, r)
	}))
	defer up.Close()
	require.NoError(t, admintest.SetWebhookURL(srv, up.URL))

	// The redeliveries come one at a time, oldest first, as the listing
	// does: reconcile starts once they are under way, catches up with them
	// and races them from there.
	redelivered, err := admintest.RedeliverFailed(srv)
	require.NoError(t, err)
	assert.Len(t, redelivered, len(events))
	whEventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(calls) >= 20 }, "the redeliveries did not start")
	results := make([]webhook.ReconcileResult, len(replicas))
	errs := make([]error, len(replicas))
	var wg sync.WaitGroup
	for i, h := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.Reconcile(ctx, client.Webhooks.ListEvents(ctx, &payments.EventListParams{Limit: 100}))
		}()
	}
	wg.Wait()
	require.NoError(t, srv.WaitForDeliveries(ctx))

	byDelivery, byReconcile := rcLogged(t, logs, "event processed"), rcLogged(t, logs, "event recovered by reconcile")
	var recovered int
	for i, res := range results {
		require.NoError(t, errs[i])
		assert.Zero(t, res.Failed)
		assert.Equal(t, len(events), res.Processed+res.AlreadyDone+res.InProgress, "replica %d saw every event", i)
		if res.InProgress == 0 {
			assert.Equal(t, events[len(events)-1].ID, res.Checkpoint.ID, "replica %d: everything done", i)
		}
		recovered += res.Processed
	}
	for _, ev := range events {
		assert.Equal(t, 1, calls[ev.ID], "event %s (%s): function calls", ev.ID, ev.Type)
		assert.Equal(t, 1, byDelivery[ev.ID]+byReconcile[ev.ID], "event %s: logged as processed once", ev.ID)
	}
	assert.Len(t, calls, len(events))
	assert.Equal(t, len(events), recovered+len(byDelivery), "every event processed by a reconcile or a redelivery")
	t.Logf("recovered by reconcile: %d; by the redeliveries: %d", recovered, len(byDelivery))
	assert.Positive(t, recovered, "reconcile overtook the redeliveries")
	assert.GreaterOrEqual(t, len(byDelivery), 20, "redeliveries processed events before reconcile started")
	for _, d := range srv.Deliveries() {
		if d.Redelivery {
			assert.Equal(t, paymentstest.DeliveryDelivered, d.Status, "redelivery of %s", d.EventID)
		}
	}
	assert.Len(t, rcLines(t, logs, "reconcile finished"), 3)

	last := events[len(events)-1]
	again, err := replicas[0].Reconcile(ctx, client.Webhooks.ListEvents(ctx, nil))
	require.NoError(t, err)
	assert.Equal(t, webhook.ReconcileResult{AlreadyDone: len(events), Checkpoint: webhook.Checkpoint{ID: last.ID, CreatedAt: last.CreatedAt}}, again)
}
