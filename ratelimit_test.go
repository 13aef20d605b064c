package payments_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
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

// arrivals returns when srv received each request to path, oldest first.
func arrivals(srv *paymentstest.Server, path string) []time.Time {
	var at []time.Time
	for _, r := range srv.Requests() {
		if r.Path == path {
			at = append(at, r.At)
		}
	}
	return at
}

// The rate limit holds the rate the server sees within 10% of the setting,
// whatever the number of goroutines pushing.
func TestRateLimitHoldsTheRate(t *testing.T) {
	if testing.Short() {
		t.Skip("timed: runs for 2 seconds")
	}
	const perSecond, run = 50, 2 * time.Second
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithRateLimit(perSecond, 1))
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = newRecipient(ctx, c)
			}
		}()
	}
	wg.Wait()
	at := arrivals(srv, "/payments/recipients")
	require.Greater(t, len(at), 50)
	rate := float64(len(at)-1) / at[len(at)-1].Sub(at[0]).Seconds()
	assert.InEpsilon(t, perSecond, rate, 0.10, "observed %.1f requests/s", rate)
}

// Waiting for the rate limit is not an attempt: observers see it as
// OperationResult.Waited, the log line as "waited", and middleware (which
// makes the attempt spans) sees one attempt that does not include the wait.
func TestRateLimitWaitIsAWaitNotAnAttempt(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	var (
		mu      sync.Mutex
		results []payments.OperationResult
		inMW    []time.Duration
	)
	observer := func(ctx context.Context, _ payments.Operation) (context.Context, func(payments.OperationResult)) {
		return ctx, func(r payments.OperationResult) { mu.Lock(); results = append(results, r); mu.Unlock() }
	}
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		start := time.Now()
		resp, err := next(req)
		mu.Lock()
		inMW = append(inMW, time.Since(start))
		mu.Unlock()
		return resp, err
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := srv.Client(payments.WithRateLimit(5, 1), payments.WithObserver(observer), payments.WithMiddleware(mw), payments.WithLogger(logger))

	for range 2 {
		r, err := newRecipient(context.Background(), c)
		require.NoError(t, err)
		assert.Equal(t, 1, r.LastResponse().Attempts)
	}
	require.Len(t, results, 2)
	assert.Zero(t, results[0].Waited, "the burst lets the first call go at once")
	assert.Greater(t, results[1].Waited, 120*time.Millisecond, "the second waits its turn: 200ms at 5/s")
	assert.Equal(t, 1, results[1].Attempts)
	require.Len(t, inMW, 2)
	assert.Less(t, inMW[1], 100*time.Millisecond, "the attempt itself does not include the wait")
	assert.Regexp(t, `msg="payments: request" .*attempts=1 .*waited=\d`, logs.String())
	assert.NotContains(t, logs.String(), "retrying")
}

// A call whose deadline would pass before its turn fails at once, sends
// nothing and counts no attempt; a cancelled wait ends at once too.
func TestRateLimitRespectsTheContext(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithRateLimit(0.5, 1))
	_, err := newRecipient(context.Background(), c) // takes the burst
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = newRecipient(ctx, c)
	assert.Less(t, time.Since(start), 250*time.Millisecond, "no pointless wait for a turn after the deadline")
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 0, terr.Attempts)
	assert.NotEmpty(t, terr.IdempotencyKey)
	assert.Contains(t, err.Error(), "; nothing was sent")
	assert.NotContains(t, err.Error(), "the outcome is unknown", "nothing was sent: the outcome is known")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	_, err = newRecipient(ctx, c)
	assert.Less(t, time.Since(start), time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Len(t, srv.Requests(), 1, "only the first call was sent")
}

func TestWithRateLimitRefusesNonsense(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
	}{{0, 1}, {-1, 1}, {math.NaN(), 1}, {10, 0}} {
		_, err := payments.NewClient("sk_test_x", payments.WithBaseURL("https://api.example.com"), payments.WithRateLimit(tc.rate, tc.burst))
		assert.ErrorIs(t, err, payments.ErrInvalidConfig, "%v", tc)
	}
	_, err := payments.NewClient("sk_test_x", payments.WithBaseURL("https://api.example.com"), payments.WithRateLimit(math.Inf(1), 1))
	assert.NoError(t, err, "an infinite rate is no limit")
}

// A 429 with Retry-After to one call holds back the next attempts of every
// call on the Client until it has passed, bounded by the client's longest
// retry wait.
func TestTooManyRequestsPausesTheWholeClient(t *testing.T) {
	for _, tc := range []struct {
		name           string
		retryAfter     time.Duration
		maxWait        time.Duration
		minGap, maxGap time.Duration
	}{
		{"Retry-After 1s", time.Second, 5 * time.Second, 800 * time.Millisecond, 3 * time.Second},
		{"capped at the client's max wait", 30 * time.Second, 300 * time.Millisecond, 200 * time.Millisecond, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := paymentstest.NewServer()
			defer srv.Close()
			c := srv.Client(payments.WithRetryWait(time.Millisecond, tc.maxWait))
			require.NoError(t, srv.InjectFault(paymentstest.Fault{
				Kind: paymentstest.FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: tc.retryAfter,
				Path: "/payments/recipients",
			}))
			var got429 atomic.Bool
			saw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
				resp, err := next(req)
				if err == nil && resp.StatusCode == http.StatusTooManyRequests {
					got429.Store(true)
				}
				return resp, err
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Recipients.Create(context.Background(), validRecipientParams(), payments.WithMiddleware(saw))
				done <- err
			}()
			require.Eventually(t, got429.Load, 5*time.Second, time.Millisecond)
			time.Sleep(20 * time.Millisecond) // the 429 has been noted by now

			// Another call, to another path, after the 429.
			_, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
			var apiErr *payments.APIError
			if err != nil {
				require.ErrorAs(t, err, &apiErr) // no webhook URL: the fake refuses it, after it arrived
			}
			require.NoError(t, <-done)

			var t429, other time.Time
			for _, r := range srv.Requests() {
				switch {
				case r.StatusCode == http.StatusTooManyRequests:
					t429 = r.At
				case r.Path != "/payments/recipients" && other.IsZero():
					other = r.At
				}
			}
			require.False(t, t429.IsZero())
			require.False(t, other.IsZero())
			gap := other.Sub(t429)
			assert.GreaterOrEqual(t, gap, tc.minGap, "the other call waited out the pause")
			assert.Less(t, gap, tc.maxGap)
		})
	}
}
