package payments_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// outage makes srv answer 503 to every request until ClearFaults.
func outage(t *testing.T, srv *paymentstest.Server) {
	t.Helper()
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Rate: 1}))
}

func newRecipient(ctx context.Context, c *payments.Client) (*payments.Recipient, error) {
	return c.Recipients.Create(ctx, validRecipientParams())
}

// assertBudgetExhausted checks the error of a call the budget stopped: the
// last attempt's typed error, its key, and the sentinel.
func assertBudgetExhausted(t *testing.T, err error, attempts int) {
	t.Helper()
	require.ErrorIs(t, err, payments.ErrRetryBudgetExhausted)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	assert.Equal(t, attempts, apiErr.Attempts)
	assert.True(t, apiErr.BudgetExhausted)
	key, ok := payments.IdempotencyKeyOf(err)
	require.True(t, ok, "the idempotency key is in the error")
	assert.Contains(t, err.Error(), key)
	assert.Contains(t, err.Error(), "retry budget is exhausted")
}

// Under an outage the default budget allows exactly Tokens/RetryCost = 100
// retries: 50 calls make their 2 retries, the 51st is stopped at its first
// retry. Then successes refill it: 1 token each, so that 5 of them buy one
// retry, whose success gives its 5 tokens back.
func TestRetryBudgetEmptiesUnderOutageAndRefills(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{WaitMin: time.Nanosecond, WaitMax: time.Nanosecond}))
	ctx := context.Background()

	outage(t, srv)
	for i := 1; i <= 50; i++ {
		_, err := newRecipient(ctx, c)
		var apiErr *payments.APIError
		require.ErrorAs(t, err, &apiErr, "call %d", i)
		require.Equal(t, 3, apiErr.Attempts, "call %d makes its 2 retries", i)
		require.NotErrorIs(t, err, payments.ErrRetryBudgetExhausted, "call %d", i)
	}
	require.Len(t, srv.Requests(), 150)
	_, err := newRecipient(ctx, c)
	assertBudgetExhausted(t, err, 1)
	assert.Len(t, srv.Requests(), 151, "the empty budget stops the retry: nothing more is sent")

	srv.ClearFaults()
	for range 4 {
		_, err := newRecipient(ctx, c)
		require.NoError(t, err)
	}
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
	_, err = newRecipient(ctx, c)
	assertBudgetExhausted(t, err, 1) // 4 tokens: a retry needs 5

	_, err = newRecipient(ctx, c) // the fifth success
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
		r, err := newRecipient(ctx, c)
		require.NoError(t, err, "retry %d: the refilled budget pays for it, and its success refunds it", i)
		assert.Equal(t, 2, r.LastResponse().Attempts)
	}
}

// 200 goroutines against a service that answers 503 to everything: with
// the default budget they send 100 retries in all (500 tokens / 5), where
// without it each sends its 2.
func TestRetryBudgetBoundsRetriesOfManyGoroutines(t *testing.T) {
	const callers = 200
	run := func(t *testing.T, opts ...payments.Option) (requests, exhausted int) {
		srv := paymentstest.NewServer()
		defer srv.Close()
		c := srv.Client(append([]payments.Option{payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond})}, opts...)...)
		outage(t, srv)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = newRecipient(context.Background(), c)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			if errors.Is(err, payments.ErrRetryBudgetExhausted) {
				exhausted++
			}
		}
		return len(srv.Requests()), exhausted
	}

	const defaultMaxRetries = 2 // a Client's retries without WithRetries
	t.Run("default budget", func(t *testing.T) {
		requests, exhausted := run(t)
		retries := payments.DefaultRetryBudget().Tokens / payments.DefaultRetryBudget().RetryCost
		assert.Equal(t, callers+retries, requests, "every call's first attempt, plus the retries the budget paid for")
		// Each stopped call made 1 or 2 attempts; the others made 3.
		assert.GreaterOrEqual(t, exhausted, callers-retries/defaultMaxRetries)
	})
	t.Run("no budget", func(t *testing.T) {
		requests, exhausted := run(t, payments.WithRetryBudget(nil))
		assert.Equal(t, callers*(1+defaultMaxRetries), requests)
		assert.Zero(t, exhausted)
	})
}

// A retry after a timed-out attempt costs TimeoutCost, more than after an
// error status: the same 20 tokens pay for 2 retries after timeouts. Every
// attempt times out by construction (a transport that answers only when the
// attempt's deadline ends), so how busy the machine is cannot turn one into
// another kind of failure.
func TestRetryBudgetTimeoutsCostMore(t *testing.T) {
	var sent atomic.Int64
	hang := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent.Add(1)
		<-req.Context().Done()
		return nil, req.Context().Err()
	})
	budget := &payments.RetryBudget{Tokens: 20, RetryCost: 5, TimeoutCost: 10, SuccessRefund: 1}
	c, err := payments.NewClient("sk_test_budget", payments.WithBaseURL("https://api.example.com"),
		payments.WithHTTPClient(&http.Client{Transport: hang}), payments.WithRetryBudget(budget),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Nanosecond, WaitMax: time.Nanosecond}), payments.WithRetries(payments.RetryPolicy{AttemptTimeout: time.Millisecond}), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 11}))
	require.NoError(t, err)

	_, err = newRecipient(context.Background(), c)
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.Equal(t, 3, terr.Attempts, "20 tokens: two retries at 10")
	assert.EqualValues(t, 3, sent.Load())
	assert.True(t, terr.BudgetExhausted)
	assert.ErrorIs(t, err, payments.ErrRetryBudgetExhausted)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the cause is still there")
	assert.Contains(t, err.Error(), terr.IdempotencyKey)
	assert.Contains(t, err.Error(), "retry budget is exhausted")

	srv := paymentstest.NewServer()
	defer srv.Close()
	budget.Tokens = 20 // the Client keeps its own copy: this changes nothing
	outage(t, srv)
	c = srv.Client(payments.WithRetryBudget(&payments.RetryBudget{Tokens: 20, RetryCost: 5, TimeoutCost: 10}),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Nanosecond, WaitMax: time.Nanosecond}), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 11}))
	_, err = newRecipient(context.Background(), c)
	assertBudgetExhausted(t, err, 5) // 20 tokens: four retries at 5
}

func TestWithRetryBudgetRefusesNonsense(t *testing.T) {
	for _, b := range []payments.RetryBudget{
		{Tokens: 0, RetryCost: 5},
		{Tokens: 10, RetryCost: -1},
		{Tokens: 10, TimeoutCost: 11},
		{Tokens: 10, RetryCost: 11},
		{Tokens: 10, SuccessRefund: -1},
	} {
		_, err := payments.NewClient("sk_test_x", payments.WithBaseURL("https://api.example.com"), payments.WithRetryBudget(&b))
		assert.ErrorIs(t, err, payments.ErrInvalidConfig, "%+v", b)
	}
	d := payments.DefaultRetryBudget()
	assert.Equal(t, payments.RetryBudget{Tokens: 500, RetryCost: 5, TimeoutCost: 10, SuccessRefund: 1}, d,
		"the AWS SDK's standard retry mode")
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
