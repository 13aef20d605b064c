package payments_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestWireWebhooksTrigger(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.completed",
		jsonResponder(200, `{"success":true,"message":"Test event sent","stan":"`+stanUUID+`"}`))

	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	assert.Equal(t, payments.EventPaymentCompleted, res.EventType)
	assert.Nil(t, res.Data)
	require.NotNil(t, res.LastResponse())
	assert.Equal(t, "Test event sent", res.LastResponse().Message)
	assert.Equal(t, stanUUID, res.LastResponse().Stan)

	req := h.onlyRequest(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/webhooks/events/trigger/payment.completed", req.Path)
	assert.False(t, req.HasBody)
	assert.Empty(t, assertSDKHeaders(t, req, false, false))
}

func TestWireWebhooksTriggerKeepsData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/recipient.verified",
		jsonResponder(200, okEnvelope(`{"delivery_id":"d-1","queued":true}`)))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventRecipientVerified)
	require.NoError(t, err)
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.Data))
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.RawJSON()))
}

func TestWireWebhooksTriggerNoContent(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.failed", httpmock.NewStringResponder(http.StatusNoContent, ""))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentFailed)
	require.NoError(t, err)
	assert.Nil(t, res.Data)
	assert.Equal(t, http.StatusNoContent, res.LastResponse().StatusCode)
}

func TestWirePathParametersAreEscaped(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/..%2Fadmin", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/brand.new_kind", jsonResponder(200, `{"success":true}`))

	for _, ev := range []payments.EventType{"a/b?c=d#e", "../admin", "brand.new_kind"} {
		_, err := h.client.Webhooks.Trigger(context.Background(), ev)
		require.NoError(t, err, ev)
	}
	reqs := h.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", reqs[0].Path)
	assert.Empty(t, reqs[0].RawQuery)
	assert.Equal(t, "/webhooks/events/trigger/..%2Fadmin", reqs[1].Path)
	assert.Equal(t, "/webhooks/events/trigger/brand.new_kind", reqs[2].Path, "unknown event names are sent as given")
}
