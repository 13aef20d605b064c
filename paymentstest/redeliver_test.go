package paymentstest_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestWebhookRetriesSchedule(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, 2 * time.Millisecond}}))
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, srv.WebhookRetryWaits())
	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	for _, dl := range srv.Deliveries() {
		assert.Equal(t, paymentstest.DeliveryFailed, dl.Status)
		assert.Len(t, dl.Attempts, 3, "the first attempt and two retries")
	}

	require.NoError(t, srv.SetWebhookRetries()) // no retry at all
	assert.Empty(t, srv.WebhookRetryWaits())
	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	log := srv.Deliveries()
	require.Len(t, log, 4)
	assert.Len(t, log[2].Attempts, 1)
	assert.Equal(t, paymentstest.DeliveryFailed, log[2].Status)
	assert.Len(t, rc.deliveries(), 3+3+1+1)
}

func TestWebhookRetriesDefaultsAndBounds(t *testing.T) {
	srv, _ := start(t)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, srv.WebhookRetryWaits(),
		"the specification's 4 retries, 1s, 2s, 4s, 8s")
	srv2, _ := start(t, paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Second}}), paymentstest.WithWebhookRetryWait(time.Millisecond))
	assert.Equal(t, []time.Duration{1, 2, 4, 8}, scaled(srv2.WebhookRetryWaits(), time.Millisecond), "the last option wins")

	assert.Error(t, srv.SetWebhookRetries(-time.Second))
	assert.Error(t, srv.SetWebhookRetries(paymentstest.MaxWebhookRetryWait+1))
	assert.Error(t, srv.SetWebhookRetries(make([]time.Duration, paymentstest.MaxWebhookRetries+1)...))
	assert.Len(t, srv.WebhookRetryWaits(), 4, "a refused schedule changes nothing")
	_, err := paymentstest.StartServer(paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{-1}}))
	assert.ErrorContains(t, err, "WithWebhook: Retries")
}

func scaled(ws []time.Duration, unit time.Duration) []time.Duration {
	out := make([]time.Duration, len(ws))
	for i, w := range ws {
		out[i] = w / unit
	}
	return out
}

func TestRedeliver(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	ev := srv.Events()[0]

	dl, err := srv.Redeliver(ev.ID)
	require.NoError(t, err)
	assert.True(t, dl.Redelivery)
	assert.Equal(t, ev.ID, dl.EventID)
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 3)
	assert.Equal(t, string(ev.Body), string(got[2].body), "the same body, so the same event id")
	checkSigned(t, got[2], secret)
	log := srv.Deliveries()
	require.Len(t, log, 3)
	assert.True(t, log[2].Redelivery)
	assert.False(t, log[0].Redelivery)
	assert.Equal(t, paymentstest.DeliveryDelivered, log[2].Status)

	_, err = srv.Redeliver("no-such-event")
	assert.ErrorIs(t, err, paymentstest.ErrUnknownEvent)
	require.NoError(t, srv.SetWebhookURL(""))
	_, err = srv.Redeliver(ev.ID)
	assert.ErrorIs(t, err, paymentstest.ErrNoWebhookURL)
	srv.Close()
	_, err = srv.Redeliver(ev.ID)
	assert.ErrorIs(t, err, paymentstest.ErrClosed)
}

func TestRedeliverEventNeverDelivered(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, paymentstest.WithWebhookRetryWait(time.Millisecond)) // deliveries off
	createRecipient(t, c, "")
	ids, err := srv.RedeliverFailed()
	assert.ErrorIs(t, err, paymentstest.ErrNoWebhookURL)
	assert.Empty(t, ids)

	require.NoError(t, srv.SetWebhook(rc.URL, secret))
	ids, err = srv.RedeliverFailed()
	require.NoError(t, err)
	assert.Empty(t, ids, "never delivered is not failed")
	_, err = srv.Redeliver(srv.Events()[1].ID)
	require.NoError(t, err)
	waitDeliveries(t, srv)
	require.Len(t, rc.deliveries(), 1)
	assert.Equal(t, string(srv.Events()[1].Body), string(rc.deliveries()[0].body))
}

func TestRedeliverFailed(t *testing.T) {
	var up atomic.Bool
	rc := newReceiver(t, func(int) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}), paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond}}))
	createRecipient(t, c, "") // both events fail, twice each
	waitDeliveries(t, srv)
	up.Store(true)
	createRecipient(t, c, "") // both delivered
	waitDeliveries(t, srv)
	events := srv.Events()

	ids, err := srv.RedeliverFailed()
	require.NoError(t, err)
	assert.Equal(t, []string{events[0].ID, events[1].ID}, ids, "the failed ones, oldest first")
	waitDeliveries(t, srv)
	log := srv.Deliveries()
	require.Len(t, log, 6)
	for _, dl := range log[4:] {
		assert.True(t, dl.Redelivery)
		assert.Equal(t, paymentstest.DeliveryDelivered, dl.Status)
	}
	got := rc.deliveries()
	assert.Equal(t, string(events[0].Body), string(got[len(got)-2].body))
	assert.Equal(t, string(events[1].Body), string(got[len(got)-1].body))

	ids, err = srv.RedeliverFailed()
	require.NoError(t, err)
	assert.Empty(t, ids, "an event delivered on redelivery has not failed")
}
