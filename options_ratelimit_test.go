package payments_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// fakeTime is a Client's clock and its waits between attempts, for tests
// that compute waits exactly: nothing waits on the wall clock. Each wait is
// recorded; with advance it moves the clock on by its length (one call at a
// time), without it the clock stands still (the waits are then the turns
// the limiter gives calls all made at once). With block, a wait lasts until
// its context ends.
type fakeTime struct {
	mu      sync.Mutex
	now     time.Time
	advance bool
	block   bool
	waits   []time.Duration
}

func newFakeTime(c *payments.Client, advance bool) *fakeTime {
	ft := &fakeTime{now: time.Now(), advance: advance}
	payments.SetClockForTest(c, ft.Now)
	payments.SetSleepForTest(c, ft.sleep)
	return ft
}

func (ft *fakeTime) Now() time.Time {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.now
}

func (ft *fakeTime) sleep(ctx context.Context, d time.Duration) error {
	ft.mu.Lock()
	ft.waits = append(ft.waits, d)
	if ft.advance {
		ft.now = ft.now.Add(d)
	}
	block := ft.block
	ft.mu.Unlock()
	if block {
		<-ctx.Done()
	}
	return ctx.Err()
}

// recorded returns the waits so far, and forgets them.
func (ft *fakeTime) recorded() []time.Duration {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	w := ft.waits
	ft.waits = nil
	return w
}

// The rate limit gives the n-th attempt its turn n/perSecond after the
// first, whatever the number of goroutines pushing: 200 calls from 8
// goroutines, all at one instant of a clock that stands still, are given
// waits of exactly 20 ms, 40 ms, ... 3.98 s (50/s, burst 1), each once, and
// the first goes at once. The waits are the limiter's own figures, never
// wall-clock rates, so a busy machine cannot change them.
func TestRateLimitHoldsTheRate(t *testing.T) {
	const perSecond, goroutines, each = 50, 8, 25
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithRateLimit(perSecond, 1))
	ft := newFakeTime(c, false)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := newRecipient(context.Background(), c)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, srv.Requests(), goroutines*each, "every call was sent once")
	waits := ft.recorded()
	slices.Sort(waits)
	require.Len(t, waits, goroutines*each-1, "every call but the first waited its turn")
	for i, w := range waits {
		assert.InDelta(t, time.Duration(i+1)*time.Second/perSecond, w, float64(time.Microsecond), "turn %d", i+1)
	}
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
		ft      *fakeTime
	)
	observer := func(ctx context.Context, _ payments.Operation) (context.Context, func(payments.OperationResult)) {
		return ctx, func(r payments.OperationResult) { mu.Lock(); results = append(results, r); mu.Unlock() }
	}
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		start := ft.Now()
		resp, err := next(req)
		mu.Lock()
		inMW = append(inMW, ft.Now().Sub(start))
		mu.Unlock()
		return resp, err
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := srv.Client(payments.WithRateLimit(5, 1), payments.WithObserver(observer), payments.WithMiddleware(mw), payments.WithLogger(logger))
	ft = newFakeTime(c, true)

	for range 2 {
		r, err := newRecipient(context.Background(), c)
		require.NoError(t, err)
		assert.Equal(t, 1, r.LastResponse().Attempts)
	}
	require.Len(t, results, 2)
	assert.Zero(t, results[0].Waited, "the burst lets the first call go at once")
	assert.InDelta(t, 200*time.Millisecond, results[1].Waited, float64(time.Microsecond), "the second waits its turn: 200ms at 5/s")
	assert.Equal(t, 1, results[1].Attempts)
	assert.Equal(t, []time.Duration{0, 0}, inMW, "the attempts themselves do not include the wait")
	assert.Regexp(t, `msg="payments: request" .*attempts=1 .*waited=200ms`, logs.String())
	assert.NotContains(t, logs.String(), "retrying")
}

// A call whose deadline would pass before its turn fails at once, sends
// nothing, waits for nothing and counts no attempt; a cancelled wait ends
// the call with the context's error, nothing sent.
func TestRateLimitRespectsTheContext(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithRateLimit(0.5, 1))
	ft := newFakeTime(c, false)
	_, err := newRecipient(context.Background(), c) // takes the burst
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = newRecipient(ctx, c)
	assert.Empty(t, ft.recorded(), "no pointless wait for a turn after the deadline (2 s away)")
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 0, terr.Attempts)
	assert.NotEmpty(t, terr.IdempotencyKey)
	assert.Contains(t, err.Error(), "; nothing was sent")
	assert.NotContains(t, err.Error(), "the outcome is unknown", "nothing was sent: the outcome is known")

	ft.mu.Lock()
	ft.block = true
	ft.mu.Unlock()
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = newRecipient(ctx, c)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []time.Duration{2 * time.Second}, ft.recorded(), "it was waiting for its turn, 2 s at 0.5/s")
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
// retry wait: on the Client's clock, the next call, to another path, waits
// exactly what is left of the pause, and one after it waits nothing.
func TestTooManyRequestsPausesTheWholeClient(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		maxWait    time.Duration
		want       time.Duration
	}{
		{"Retry-After 1s", time.Second, 5 * time.Second, time.Second},
		{"capped at the client's max wait", 30 * time.Second, 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := paymentstest.NewServer()
			defer srv.Close()
			c := srv.Client(payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: tc.maxWait}))
			ft := newFakeTime(c, true)
			require.NoError(t, srv.InjectFault(paymentstest.Fault{
				Status: http.StatusTooManyRequests, RetryAfter: tc.retryAfter,
				Path: "/payments/recipients",
			}))
			_, err := c.Recipients.Create(context.Background(), validRecipientParams(), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
			require.Empty(t, ft.recorded())

			// Another call, to another path, after the 429.
			_, err = c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
			if err != nil {
				require.ErrorAs(t, err, &apiErr) // no webhook URL: the fake refuses it, after it arrived
			}
			assert.Equal(t, []time.Duration{tc.want}, ft.recorded(), "the other call waited out the pause")
			_, err = newRecipient(context.Background(), c)
			require.NoError(t, err)
			assert.Empty(t, ft.recorded(), "the pause has passed")
			assert.Len(t, srv.Requests(), 3)
		})
	}
}
