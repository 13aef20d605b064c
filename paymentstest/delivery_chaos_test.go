package paymentstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestDeliveryChaosDuplicate(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithDeliveryChaos(paymentstest.DeliveryChaos{Duplicate: true}))...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 2, "the one event, twice")
	assert.Equal(t, got[0].body, got[1].body)
	log := srv.Deliveries()
	require.Len(t, log, 2)
	assert.Equal(t, log[0].EventID, log[1].EventID)
	assert.False(t, log[0].Redelivery)
	assert.True(t, log[1].Redelivery)
	assert.Len(t, srv.Events(), 1)
}

func TestDeliveryChaosNewestFirst(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	srv.PauseDeliveries()
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "50", "order-chaos")
	_, err := c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID})
	require.NoError(t, err)
	require.NoError(t, srv.SetDeliveryChaos(paymentstest.DeliveryChaos{NewestFirst: true}))
	assert.True(t, srv.DeliveryChaosSetting().NewestFirst)
	srv.ResumeDeliveries()
	waitDeliveries(t, srv)
	assert.Equal(t, []string{"payment.completed", "payment.initiated", "recipient.verified", "recipient.created"},
		kindsOf(t, rc.deliveries()), "newest first")
}

func TestDeliveryChaosDelay(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithDeliveryChaos(paymentstest.DeliveryChaos{Delay: time.Hour}))...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, srv.WaitForDeliveries(short), context.DeadlineExceeded)
	assert.Empty(t, rc.deliveries())
	d := srv.Deliveries()[0]
	assert.InDelta(t, time.Hour.Seconds(), d.NextAttemptAt.Sub(srv.Now()).Seconds(), 60)

	// The delay applies to the events produced while it is set.
	require.NoError(t, srv.SetDeliveryChaos(paymentstest.DeliveryChaos{Delay: time.Millisecond}))
	_, err = c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitReceived(t, rc, 1)
}

func TestDeliveryChaosRefusesBadDelay(t *testing.T) {
	_, err := paymentstest.StartServer(paymentstest.WithDeliveryChaos(paymentstest.DeliveryChaos{Delay: -time.Second}))
	assert.ErrorContains(t, err, "WithSandbox: DeliveryDelay")
	srv := paymentstest.NewServer()
	defer srv.Close()
	assert.Error(t, srv.SetDeliveryChaos(paymentstest.DeliveryChaos{Delay: 2 * time.Hour}))
	assert.Equal(t, paymentstest.DeliveryChaos{}, srv.DeliveryChaosSetting())
}
