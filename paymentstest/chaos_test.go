package paymentstest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

var statusFaults = []paymentstest.Fault{
	{Status: http.StatusServiceUnavailable},
	{Status: http.StatusBadGateway},
	{Status: http.StatusTooManyRequests, RetryAfter: time.Second},
}

func TestSetRandomFaultsRefusesBadSettings(t *testing.T) {
	srv, _ := start(t)
	for _, rf := range []paymentstest.RandomFaults{
		{Rate: -0.1, Faults: statusFaults},
		{Rate: 1.01, Faults: statusFaults},
		{Rate: math.NaN(), Faults: statusFaults},
		{Rate: 0.5},
		{Rate: 0.5, Faults: []paymentstest.Fault{{Status: 200}}},
		{Rate: 0.5, Faults: []paymentstest.Fault{{Latency: -1}}},
		{Rate: 0.5, Faults: []paymentstest.Fault{{}}},
	} {
		assert.Error(t, srv.SetRandomFaults(rf), "%+v", rf)
	}
	assert.NoError(t, srv.SetRandomFaults(paymentstest.RandomFaults{}), "rate 0 turns them off")
	assert.Zero(t, srv.FaultsInjected())
}

// faultSequence sends n requests, each once, and returns what the server did
// to each of them.
func faultSequence(t *testing.T, seed uint64, rate float64, n int) []string {
	t.Helper()
	srv, _ := start(t)
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, srv.SetRandomFaults(paymentstest.RandomFaults{Rate: rate, Faults: statusFaults, Seed: seed}))
	for i := 0; i < n; i++ {
		_, _ = c.Recipients.Create(ctx(t), recipientParams())
	}
	var out []string
	for _, rec := range srv.Requests() {
		out = append(out, fmt.Sprintf("%s/%d", rec.Fault, rec.StatusCode))
	}
	require.Len(t, out, n)
	faulted := 0
	for _, rec := range srv.Requests() {
		if rec.Fault != "" {
			faulted++
		}
	}
	assert.Equal(t, faulted, srv.FaultsInjected())
	assert.Equal(t, n-faulted, len(srv.Recipients()), "a request not broken did its work")
	return out
}

func TestRandomFaultsAreReproducible(t *testing.T) {
	const n = 200
	a := faultSequence(t, 42, 0.5, n)
	b := faultSequence(t, 42, 0.5, n)
	assert.Equal(t, a, b, "the same seed breaks the same requests the same way")
	assert.NotEqual(t, a, faultSequence(t, 43, 0.5, n), "another seed, other faults")

	faulted, kinds := 0, map[string]int{}
	for _, s := range a {
		if s != "/201" {
			faulted++
			kinds[s]++
		}
	}
	// Binomial(200, 0.5): mean 100, standard deviation about 7.
	assert.InDelta(t, n/2, faulted, 40, "about half the requests are broken")
	assert.Len(t, kinds, len(statusFaults), "every kind is drawn: %v", kinds)

	for _, s := range faultSequence(t, 7, 1, 20) {
		assert.NotEqual(t, "/201", s, "rate 1 breaks every request")
	}
	for _, s := range faultSequence(t, 7, 0, 20) {
		assert.Equal(t, "/201", s, "rate 0 breaks none")
	}
}

func TestRandomFaultsMatchPathsAndYieldToPendingFaults(t *testing.T) {
	srv, c := start(t)
	require.NoError(t, srv.SetRandomFaults(paymentstest.RandomFaults{
		Rate: 1, Seed: 1,
		Faults: []paymentstest.Fault{{Status: http.StatusBadGateway, Path: "/payments/initiate"}},
	}))
	r := createRecipient(t, c, "") // another path: never broken
	assert.Zero(t, srv.FaultsInjected())

	srv.FailNext(1, http.StatusGatewayTimeout, 0) // a pending fault comes first
	_, err := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1})).Payments.Initiate(ctx(t), initiateParams(r.ID, "order-r"))
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusGatewayTimeout, apiErr.StatusCode)

	_, err = c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-r"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadGateway, apiErr.StatusCode)
	assert.Equal(t, 3, apiErr.Attempts, "every attempt was broken (the 2 default retries)")
	assert.Empty(t, srv.PaymentsByReference("order-r"))

	srv.ClearFaults() // turns random faults off too
	key, ok := payments.IdempotencyKeyOf(err)
	require.True(t, ok)
	p, err := c.Payments.Initiate(ctx(t), initiateParams(r.ID, "order-r"), payments.WithIdempotencyKey(key))
	require.NoError(t, err)
	assert.Equal(t, 1, p.LastResponse().Attempts)
	assert.Len(t, srv.PaymentsByReference("order-r"), 1)
}

func TestFaultLatency(t *testing.T) {
	srv, c := start(t)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Latency: 50 * time.Millisecond}))
	begin := time.Now()
	r := createRecipient(t, c, "")
	assert.GreaterOrEqual(t, time.Since(begin), 50*time.Millisecond)
	assert.Equal(t, 1, r.LastResponse().Attempts, "a delay is not a failure")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "latency", reqs[0].Fault)
	assert.Equal(t, http.StatusCreated, reqs[0].StatusCode)

	// A client that gives up during the delay abandons the request.
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Latency: time.Minute}))
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Recipients.Create(short, recipientParams())
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Zero(t, srv.Requests()[1].StatusCode, "no answer")
	assert.Len(t, srv.Recipients(), 1, "the abandoned request did nothing")
}
