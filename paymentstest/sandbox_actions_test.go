package paymentstest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// A payment settled before its processing delay ends stays as settled: the
// late completion finds it no longer pending and sends nothing.
func TestSettlePaymentReplacesTheLateCompletion(t *testing.T) {
	// 300 ms between confirm and the late completion: the settle comes
	// within a few milliseconds, a wide margin on a loaded machine.
	srv, c := start(t, paymentstest.WithProcessingDelay(300*time.Millisecond))
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, paymentstest.AmountCompletesLate, "order-settle-late")
	_, err := c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID})
	require.NoError(t, err)
	got, err := srv.SettlePayment(p.ID, payments.PaymentStatusRejected)
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusRejected, got.Status)
	assert.False(t, got.IsCompleted)

	require.NoError(t, srv.WaitForDeliveries(ctx(t)), "waits for the late work too")
	var kinds []payments.EventType
	for _, ev := range srv.Events() {
		kinds = append(kinds, ev.Type)
	}
	assert.NotContains(t, kinds, payments.EventPaymentCompleted)
	assert.Contains(t, kinds, payments.EventPaymentRejected)
	final, _ := srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusRejected, final.Status)

	_, err = srv.SettlePayment(p.ID, "refunded")
	assert.ErrorContains(t, err, `status "refunded"`)
}

func TestTriggerEventForEachKindOfResource(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	id := func(ev paymentstest.Event) string {
		var d struct {
			ID, Currency string
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		if d.ID == "" {
			return d.Currency // account.*: the balance of a currency
		}
		return d.ID
	}
	ev, err := srv.TriggerEvent(payments.EventRecipientVerificationFailed, r.ID)
	require.NoError(t, err)
	assert.Equal(t, r.ID, id(ev))
	ev, err = srv.TriggerEvent(payments.EventVirtualAccountUpdated, va.ID)
	require.NoError(t, err)
	assert.Equal(t, va.ID, id(ev))
	ev, err = srv.TriggerEvent(payments.EventAccountBalanceLow, "ngn")
	require.NoError(t, err)
	assert.Equal(t, "NGN", id(ev))
	ev, err = srv.TriggerEvent(payments.EventPaymentCompleted, "")
	require.NoError(t, err, "no resource: sample data")
	assert.Contains(t, string(ev.Data), "test_trigger_")

	n := len(srv.Events())
	_, err = srv.TriggerEvent(payments.EventVirtualAccountPaymentReceived, va.ID)
	assert.ErrorIs(t, err, paymentstest.ErrUnknownResource, "nothing received yet")
	_, err = srv.TriggerEvent(payments.EventRecipientVerified, va.ID)
	assert.ErrorIs(t, err, paymentstest.ErrUnknownResource, "an account is no recipient")
	_, err = srv.TriggerEvent("payment.exploded", r.ID)
	assert.ErrorIs(t, err, paymentstest.ErrUnknownEventKind)
	_, err = srv.TriggerEvent(payments.EventAccountUpdated, "dollars")
	assert.ErrorIs(t, err, paymentstest.ErrUnknownResource)
	assert.Len(t, srv.Events(), n, "refusals record nothing")
}
