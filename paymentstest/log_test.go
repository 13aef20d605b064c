package paymentstest_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestLogLimit: every log keeps its last n entries, oldest first, and
// drops the oldest as new ones come.
func TestLogLimit(t *testing.T) {
	const limit = 3
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithLogLimit(limit))...)

	const n = 5 // recipients: 5 requests, 10 events, 10 deliveries
	for i := range n {
		_, err := c.Recipients.Create(ctx(t), recipientParams(), payments.WithIdempotencyKey(fmt.Sprintf("key-%d", i)))
		require.NoError(t, err)
	}
	waitDeliveries(t, srv)

	reqs := srv.Requests()
	require.Len(t, reqs, limit)
	for i, r := range reqs {
		assert.Equal(t, fmt.Sprintf("key-%d", n-limit+i), r.IdempotencyKey, "request %d: the newest, oldest first", i)
		assert.Equal(t, http.StatusCreated, r.StatusCode)
	}

	got := rc.deliveries()
	require.Len(t, got, 2*n, "the limit cuts the logs, not the deliveries")
	events := srv.Events()
	require.Len(t, events, limit)
	deliveries := srv.Deliveries()
	require.Len(t, deliveries, limit)
	for i := range limit {
		sent, err := payments.ParseEvent(got[2*n-limit+i].body)
		require.NoError(t, err)
		assert.Equal(t, sent.ID, events[i].ID, "event %d", i)
		assert.Equal(t, sent.ID, deliveries[i].EventID, "delivery %d", i)
		assert.Equal(t, paymentstest.DeliveryDelivered, deliveries[i].Status)
	}
	// The last delivered event is recipient.verified of the last recipient.
	assert.Equal(t, payments.EventRecipientVerified, events[limit-1].Type)
	assert.Equal(t, payments.EventRecipientCreated, events[limit-2].Type)
}

// TestLogLimitDefault: without the option, a log holds DefaultLogLimit
// entries, and every request is there below that.
func TestLogLimitDefault(t *testing.T) {
	assert.Equal(t, 10000, paymentstest.DefaultLogLimit, "the documented default")
	srv, c := start(t)
	for range 3 {
		createRecipient(t, c, "")
	}
	assert.Len(t, srv.Requests(), 3)
	assert.Len(t, srv.Events(), 6)

	for _, n := range []int{0, -1} {
		_, err := paymentstest.StartServer(paymentstest.WithLogLimit(n))
		require.Error(t, err, "WithLogLimit(%d)", n)
	}
}
