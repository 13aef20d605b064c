package paymentstest_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"

	payments "github.com/paymentsapi/payments-go"
)

type retriesData struct {
	Retries      int       `json:"retries"`
	Waits        []string  `json:"waits"`
	WaitsSeconds []float64 `json:"waits_seconds"`
}

func TestAdminWebhookRetries(t *testing.T) {
	srv, _ := startAdmin(t)
	res := send(t, srv, http.MethodGet, "/_sandbox/webhook-retries", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, retriesData{Retries: 4, Waits: []string{"1s", "2s", "4s", "8s"}, WaitsSeconds: []float64{1, 2, 4, 8}},
		data[retriesData](t, res))

	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-retries", `{"waits": ["250ms", 0.5, "1m"]}`, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.Equal(t, retriesData{Retries: 3, Waits: []string{"250ms", "500ms", "1m0s"}, WaitsSeconds: []float64{0.25, 0.5, 60}},
		data[retriesData](t, res))
	assert.Equal(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Minute}, srv.WebhookRetryWaits())

	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-retries", `{"waits": []}`, nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, 0, data[retriesData](t, res).Retries)
	assert.Empty(t, srv.WebhookRetryWaits())
}

func TestAdminWebhookRetriesRefusesBadSchedules(t *testing.T) {
	srv, _ := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Second}}))
	for body, fields := range map[string][]string{
		`{}`:                            {"waits"},
		`{"waits": "1s"}`:               {"waits"},
		`{"waits": ["1s"], "tries": 3}`: {"tries"},
		`{"waits": ["-1s", "soon", 7200, true, "2h"]}`:           {"waits[0]", "waits[1]", "waits[2]", "waits[3]", "waits[4]"},
		`{"waits": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}`: {"waits"},
	} {
		res := send(t, srv, http.MethodPut, "/_sandbox/webhook-retries", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, body)
		assert.Equal(t, fields, res.fields(), body)
	}
	res := send(t, srv, http.MethodPut, "/_sandbox/webhook-retries", `{"waits": [`, nil)
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, []time.Duration{time.Second}, srv.WebhookRetryWaits(), "nothing changed")
}

type redeliveredData struct {
	EventIDs []string `json:"event_ids"`
}

func TestAdminRedeliver(t *testing.T) {
	var up atomic.Bool
	rc := newReceiver(t, func(int) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	})
	srv, c := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}), paymentstest.WithWebhook(paymentstest.Webhook{NoRetries: true}))
	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	events := srv.Events()
	up.Store(true)

	res := send(t, srv, http.MethodPost, "/_sandbox/events/"+events[1].ID+"/redeliver", "", nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	queued := data[struct {
		EventID    string `json:"event_id"`
		Status     string `json:"status"`
		Redelivery bool   `json:"redelivery"`
	}](t, res)
	assert.Equal(t, events[1].ID, queued.EventID)
	assert.Equal(t, "pending", queued.Status)
	assert.True(t, queued.Redelivery)
	waitDeliveries(t, srv)

	res = send(t, srv, http.MethodPost, "/_sandbox/events/redeliver-failed", "", nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	assert.Equal(t, []string{events[0].ID}, data[redeliveredData](t, res).EventIDs,
		"the second event was delivered on its redelivery")
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 4)
	assert.Equal(t, string(events[1].Body), string(got[2].body))
	assert.Equal(t, string(events[0].Body), string(got[3].body))

	res = send(t, srv, http.MethodPost, "/_sandbox/events/redeliver-failed", "{}", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.JSONEq(t, `{"event_ids":[]}`, string(res.env.Data), "a list, never null")
}

func TestAdminRedeliverErrors(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := startAdmin(t, fastHooks(rc.URL)...)
	createRecipient(t, c, "")
	id := srv.Events()[0].ID

	res := send(t, srv, http.MethodPost, "/_sandbox/events/no-such-event/redeliver", "", nil)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Equal(t, string(payments.CodeNotFound), res.env.Code)
	res = send(t, srv, http.MethodPost, "/_sandbox/events/"+id+"/redeliver", `{"now": true}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, []string{"now"}, res.fields())
	res = send(t, srv, http.MethodGet, "/_sandbox/events/"+id+"/redeliver", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)

	require.NoError(t, srv.SetWebhookURL(""))
	for _, path := range []string{"/_sandbox/events/" + id + "/redeliver", "/_sandbox/events/redeliver-failed"} {
		res = send(t, srv, http.MethodPost, path, "", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, path)
		assert.Equal(t, string(payments.CodeWebhookNotConfigured), res.env.Code, path)
	}
}
