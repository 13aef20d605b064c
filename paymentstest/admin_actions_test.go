package paymentstest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestAdminRedeliverToAnotherURL(t *testing.T) {
	first, other := newReceiver(t, nil), newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(first.URL), paymentstest.WithAdminAPI())...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	id := srv.Events()[0].ID

	r := send(t, srv, http.MethodPost, "/_sandbox/events/"+id+"/redeliver", `{"url": "`+other.URL+`/hooks"}`, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	waitDeliveries(t, srv)
	require.Len(t, other.deliveries(), 1)
	assert.Len(t, first.deliveries(), 1, "the webhook URL got nothing more")
	assert.Equal(t, first.URL, srv.WebhookURL(), "and stays as it was")
	log := srv.Deliveries()
	assert.Equal(t, other.URL+"/hooks", log[1].URL)
	assert.True(t, log[1].Redelivery)

	for body, field := range map[string]string{`{"url": "ftp://x"}`: "url", `{"url": ""}`: "url", `{"to": "http://x"}`: "to"} {
		bad := send(t, srv, http.MethodPost, "/_sandbox/events/"+id+"/redeliver", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, bad.status, body)
		assert.Equal(t, []string{field}, bad.fields(), body)
	}
	unknown := send(t, srv, http.MethodPost, "/_sandbox/events/nope/redeliver", "", nil)
	assert.Equal(t, http.StatusNotFound, unknown.status)
	assert.Len(t, srv.Deliveries(), 2, "nothing queued by bad input")
}

func TestAdminTriggerForAResource(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithAdminAPI())...)
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "50", "order-trigger")
	waitDeliveries(t, srv)
	before := len(srv.Events())

	res := send(t, srv, http.MethodPost, "/_sandbox/events/trigger", `{"event": "payment.failed", "resource_id": "`+p.ID+`"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	waitDeliveries(t, srv)
	got := rc.deliveries()
	ev, err := payments.ParseEvent(got[len(got)-1].body)
	require.NoError(t, err)
	assert.Equal(t, payments.EventPaymentFailed, ev.Type)
	pay, err := ev.Payment()
	require.NoError(t, err)
	assert.Equal(t, p.ID, pay.ID)
	assert.Equal(t, payments.PaymentStatusFailed, pay.Status)
	stored, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusPending, stored.Status, "the stored payment does not change")

	for body, want := range map[string]int{
		`{"event": "payment.exploded", "resource_id": "x"}`:          http.StatusUnprocessableEntity,
		`{"event": "payment.failed", "resource_id": "` + r.ID + `"}`: http.StatusNotFound, // a recipient, not a payment
		`{"event": "recipient.verified", "resource_id": "nope"}`:     http.StatusNotFound,
		`{"resource_id": "x"}`: http.StatusUnprocessableEntity,
	} {
		bad := send(t, srv, http.MethodPost, "/_sandbox/events/trigger", body, nil)
		assert.Equal(t, want, bad.status, body)
		assert.NotEmpty(t, bad.env.Message)
	}
	assert.Len(t, srv.Events(), before+1, "bad input records nothing")
}

func TestAdminPauseResumeAndChaos(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithAdminAPI())...)
	require.Equal(t, http.StatusOK, send(t, srv, http.MethodPost, "/_sandbox/deliveries/pause", "", nil).status)
	assert.True(t, srv.DeliveriesPaused())
	set := send(t, srv, http.MethodPut, "/_sandbox/delivery-chaos", `{"duplicate": true, "delay": "1ms"}`, nil)
	require.Equal(t, http.StatusOK, set.status, "%s", set.body)
	assert.JSONEq(t, `{"delay": "1ms", "delay_seconds": 0.001, "duplicate": true, "newest_first": false}`, string(set.env.Data))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	assert.Empty(t, rc.deliveries())
	require.Equal(t, http.StatusOK, send(t, srv, http.MethodPost, "/_sandbox/deliveries/resume", "", nil).status)
	waitDeliveries(t, srv)
	assert.Len(t, rc.deliveries(), 2, "delivered twice")

	bad := send(t, srv, http.MethodPut, "/_sandbox/delivery-chaos", `{"delay": "2h", "duplicate": "yes"}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, bad.status)
	assert.ElementsMatch(t, []string{"delay", "duplicate"}, bad.fields())
	assert.True(t, srv.DeliveryChaosSetting().Duplicate, "unchanged")
}

func TestAdminSettle(t *testing.T) {
	srv, c := start(t, paymentstest.WithAdminAPI(), paymentstest.WithProcessingDelay(paymentstest.MaxDeliveryDelay))
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, paymentstest.AmountCompletesLate, "order-settle")
	before := srv.Balance("NGN")
	_, err := c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID})
	require.NoError(t, err)

	res := send(t, srv, http.MethodPost, "/_sandbox/payments/"+p.ID+"/settle", `{"status": "failed"}`, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var data struct{ Status string }
	require.NoError(t, json.Unmarshal(res.env.Data, &data))
	assert.Equal(t, "failed", data.Status)
	assert.True(t, srv.Balance("NGN").Equal(before), "the total is given back")
	evs := srv.Events()
	assert.Equal(t, payments.EventPaymentFailed, evs[len(evs)-1].Type)

	again := send(t, srv, http.MethodPost, "/_sandbox/payments/"+p.ID+"/settle", `{"status": "completed"}`, nil)
	assert.Equal(t, http.StatusConflict, again.status)
	assert.Equal(t, string(paymentstest.CodeNotSettleable), again.env.Code)
	assert.Equal(t, http.StatusNotFound, send(t, srv, http.MethodPost, "/_sandbox/payments/nope/settle", `{"status": "failed"}`, nil).status)
	assert.Equal(t, http.StatusUnprocessableEntity, send(t, srv, http.MethodPost, "/_sandbox/payments/"+p.ID+"/settle", `{"status": "pending"}`, nil).status)
	assert.Len(t, srv.Events(), len(evs), "nothing more")
}
