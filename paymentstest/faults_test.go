package paymentstest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func initiateParams(recipientID, reference string) *payments.PaymentInitiateParams {
	return &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("120.50")}, Currency: "NGN", RecipientID: recipientID, Reference: reference}
}

func TestFailNextIsRetried(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	srv.FailNext(2, http.StatusServiceUnavailable, time.Second) // Retry-After is capped by the client's 20ms
	start := time.Now()
	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-f"))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "Retry-After was capped at the client's maximum wait")
	assert.Equal(t, 3, p.LastResponse().Attempts)
	assert.Len(t, srv.PaymentsByReference("order-f"), 1)
	assert.Equal(t, 2, srv.FaultsInjected())
	assert.Zero(t, srv.PendingFaults())

	var statuses []int
	for _, rec := range srv.Requests()[1:] {
		statuses = append(statuses, rec.StatusCode)
		assert.Equal(t, p.LastResponse().IdempotencyKey, rec.IdempotencyKey, "one key for every attempt")
	}
	assert.Equal(t, []int{503, 503, 200}, statuses)
}

func TestFailNextAnswer(t *testing.T) {
	srv, _ := start(t)
	srv.FailNext(1, http.StatusTooManyRequests, 1500*time.Millisecond)
	res := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, nil)
	assert.Equal(t, http.StatusTooManyRequests, res.status)
	assert.Equal(t, "2", res.header.Get("Retry-After"), "whole seconds, rounded up")
	assert.Equal(t, "too_many_requests", res.env.Code)
	assert.False(t, res.env.Success)
	assert.Empty(t, srv.Recipients(), "the work was not done")

	srv.FailNext(1, 200, 0) // not a failure: sent as 500
	res = send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, nil)
	assert.Equal(t, http.StatusInternalServerError, res.status)
	assert.Empty(t, res.header.Get("Retry-After"))

	// Faults strike before authentication, as a proxy would.
	srv.FailNext(1, http.StatusBadGateway, 0)
	res = send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, map[string]string{"Authorization": ""})
	assert.Equal(t, http.StatusBadGateway, res.status)

	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	srv.FailNext(1, http.StatusServiceUnavailable, 3*time.Second)
	_, err := c.Recipients.Create(ctx(t), recipientParams())
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	assert.Equal(t, "service_unavailable", string(apiErr.Code))
	assert.Equal(t, "3", apiErr.Header.Get("Retry-After"))
	assert.True(t, apiErr.Temporary())
}

func TestDropNextIsRetried(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	srv.DropNext(2)
	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-d"))
	require.NoError(t, err)
	assert.Len(t, srv.PaymentsByReference("order-d"), 1)
	assert.Equal(t, 2, srv.FaultsInjected())
	dropped := 0
	for _, rec := range srv.Requests() {
		if rec.Fault == "drop" {
			dropped++
			assert.Zero(t, rec.StatusCode)
			assert.Equal(t, p.LastResponse().IdempotencyKey, rec.IdempotencyKey)
		}
	}
	assert.Equal(t, 2, dropped)
}

func TestDropNextAfterWorkReplays(t *testing.T) {
	srv, c := start(t)
	r := createRecipient(t, c, "")
	srv.DropNextAfterWork(1)
	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-w"))
	require.NoError(t, err)
	stored := srv.PaymentsByReference("order-w")
	require.Len(t, stored, 1, "the retry got the stored answer, not a second payment")
	assert.Equal(t, stored[0].ID, p.ID)
	assert.Equal(t, stored[0].Quote.QuoteID, p.Quote.QuoteID)

	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	assert.True(t, last.Replayed)
	assert.Equal(t, "drop_after_work", reqs[len(reqs)-2].Fault)
	assert.Equal(t, last.Stan, reqs[len(reqs)-2].Stan, "the lost answer is the one replayed")

	// Confirm too: executed once, whatever the connection did.
	srv.DropNextAfterWork(1)
	done, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
	assert.Equal(t, 1, countEvents(srv, payments.EventPaymentCompleted))
}

func TestDropAfterWorkWithoutKeyLosesTheAnswer(t *testing.T) {
	srv, c := start(t)
	srv.DropNextAfterWork(1)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	var tErr *payments.TransportError
	require.ErrorAs(t, err, &tErr, "no key, no retry: the caller cannot know")
	assert.Len(t, srv.VirtualAccounts(), 1, "although the account was opened")
}

func TestFaultStorm(t *testing.T) {
	srv, _ := start(t)
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 7}))
	r := createRecipient(t, c, "")
	srv.FailNext(1, http.StatusBadGateway, 0)
	srv.DropNext(1)
	srv.FailNext(1, http.StatusGatewayTimeout, 0)
	srv.DropNextAfterWork(1)
	srv.FailNext(1, http.StatusServiceUnavailable, time.Second)
	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-s"))
	require.NoError(t, err)
	assert.Equal(t, 5, srv.FaultsInjected())
	assert.Len(t, srv.PaymentsByReference("order-s"), 1)

	srv.DropNext(1)
	srv.FailNext(1, http.StatusInternalServerError, 0)
	srv.DropNextAfterWork(1)
	done, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
	assert.Len(t, srv.Payments(), 1)
	assert.Equal(t, 1, countEvents(srv, payments.EventPaymentCompleted))
}

func TestInjectFault(t *testing.T) {
	srv, c := start(t)
	require.Error(t, srv.InjectFault(paymentstest.Fault{Status: 200}))
	require.Error(t, srv.InjectFault(paymentstest.Fault{}))
	assert.Zero(t, srv.PendingFaults())

	// A fault restricted to one path leaves the others alone.
	require.NoError(t, srv.InjectFault(paymentstest.Fault{
		Status: http.StatusServiceUnavailable, Times: 2, Path: "/payments/initiate",
	}))
	r := createRecipient(t, c, "")
	assert.Equal(t, 2, srv.PendingFaults())
	_, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-p"))
	require.NoError(t, err)
	assert.Equal(t, 2, srv.FaultsInjected())

	srv.DropNext(3)
	srv.ClearFaults()
	assert.Zero(t, srv.PendingFaults())
	createRecipient(t, c, "")
}

func TestLatency(t *testing.T) {
	srv, c := start(t)
	srv.SetLatency(100 * time.Millisecond)
	begin := time.Now()
	createRecipient(t, c, "")
	assert.GreaterOrEqual(t, time.Since(begin), 100*time.Millisecond)

	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.VirtualAccounts.Create(short, vaParams())
	require.ErrorIs(t, err, context.DeadlineExceeded)

	srv.SetLatency(-1) // off
	begin = time.Now()
	createRecipient(t, c, "")
	assert.Less(t, time.Since(begin), 100*time.Millisecond)
	require.Eventually(t, func() bool { return len(srv.Requests()) == 3 }, time.Second, 5*time.Millisecond)
	assert.Empty(t, srv.VirtualAccounts(), "the abandoned request did nothing")
}
