package chaostest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

const (
	chaosWorkers         = 16
	chaosDefaultPayments = 512
	// chaosRate is the share of requests a fault hits.
	chaosRate = 1.0 / 3
	// chaosRetries is the SDK's default: with it a few percent of calls
	// exhaust their retries under this storm, so that every run also proves
	// the "retry later with the same key" path, under concurrency.
	chaosRetries = 2 // a Client's retries without WithRetries
	// callTimeout bounds each call. A Retry-After of an hour that the SDK
	// failed to cap at its maximum wait (20 ms here) would end a call on
	// this deadline, which the test reports.
	callTimeout = 30 * time.Second
)

// chaosFaults are drawn with equal chance. Seven break the request; the two
// latencies only slow it down.
var chaosFaults = []paymentstest.Fault{
	{Status: http.StatusInternalServerError},
	{Status: http.StatusBadGateway},
	{Status: http.StatusServiceUnavailable},
	{Status: http.StatusGatewayTimeout},
	{Status: http.StatusTooManyRequests, RetryAfter: time.Hour},
	{Drop: true},
	{Drop: true, AfterWork: true},
	{Latency: 2 * time.Millisecond},
	{Latency: 25 * time.Millisecond},
}

// logical is one payment as the merchant sees it: initiate, then confirm.
type logical struct {
	ref    string
	params *payments.PaymentInitiateParams

	initiated  *payments.Payment
	initKey    string
	initErr    error
	confirmed  *payments.Payment
	confirmKey string
	confirmErr error
	attempts   int // HTTP attempts the SDK reported, over both calls
}

func (lp *logical) run(c *payments.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p, err := c.Payments.Initiate(ctx, lp.params)
	if err != nil {
		lp.initErr, lp.initKey = err, keyOf(err)
		lp.attempts += attemptsOf(err)
		return
	}
	lp.initiated, lp.initKey = p, p.LastResponse().IdempotencyKey
	lp.attempts += p.LastResponse().Attempts

	ctx, cancel = context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	done, err := c.Payments.Confirm(ctx, p.ConfirmParams())
	if err != nil {
		lp.confirmErr, lp.confirmKey = err, keyOf(err)
		lp.attempts += attemptsOf(err)
		return
	}
	lp.confirmed, lp.confirmKey = done, done.LastResponse().IdempotencyKey
	lp.attempts += done.LastResponse().Attempts
}

func keyOf(err error) string {
	k, _ := payments.IdempotencyKeyOf(err)
	return k
}

func attemptsOf(err error) int {
	var (
		apiErr *payments.APIError
		tErr   *payments.TransportError
		mErr   *payments.MalformedResponseError
	)
	switch {
	case errors.As(err, &apiErr):
		return apiErr.Attempts
	case errors.As(err, &tErr):
		return tErr.Attempts
	case errors.As(err, &mErr) && mErr.Response != nil:
		return mErr.Response.Attempts
	}
	return 0
}

// checkCallError asserts what the README promises of a failed call: a typed
// error that a later retry can fix, naming its idempotency key in its text
// and through IdempotencyKeyOf, and not the end of the call's deadline.
func checkCallError(t *testing.T, what string, err error) {
	t.Helper()
	var (
		apiErr *payments.APIError
		tErr   *payments.TransportError
		mErr   *payments.MalformedResponseError
	)
	switch {
	case errors.As(err, &apiErr):
		assert.True(t, apiErr.Temporary(), "%s: only retryable faults were injected: %v", what, err)
	case errors.As(err, &tErr), errors.As(err, &mErr):
	default:
		t.Errorf("%s: untyped error %T: %v", what, err, err)
	}
	assert.False(t, errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled),
		"%s: the call ran into its deadline (a Retry-After not capped?): %v", what, err)
	key, ok := payments.IdempotencyKeyOf(err)
	if assert.True(t, ok, "%s: no idempotency key in %v", what, err) {
		assert.Contains(t, err.Error(), key, "%s: the message names the key", what)
	}
}

func envUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "%s=%q", name, s)
	return v
}

func faultName(rec paymentstest.RequestRecord) string {
	if rec.Fault == "status" {
		return fmt.Sprintf("HTTP %d", rec.StatusCode)
	}
	return rec.Fault
}

// faultKind is what RequestRecord.Fault says of a request f broke.
func faultKind(f paymentstest.Fault) string {
	switch {
	case f.Status != 0:
		return "status"
	case f.Drop && f.AfterWork:
		return "drop_after_work"
	case f.Drop:
		return "drop"
	}
	return "latency"
}

// injectStorm makes srv break a share rate of requests, each broken by one
// of faults drawn with equal chance, from seed: one random Fault each,
// fault i at the rate that leaves it rate/len(faults) of all requests once
// the faults before it (which a request meets first) have taken theirs.
func injectStorm(srv *paymentstest.Server, rate float64, faults []paymentstest.Fault, seed uint64) error {
	share := rate / float64(len(faults))
	for i, f := range faults {
		f.Rate = share / (1 - float64(i)*share)
		f.Seed = seed + uint64(i)
		if err := srv.InjectFault(f); err != nil {
			return err
		}
	}
	return nil
}

// TestChaos sends hundreds of logical payments from 16 goroutines through
// one Client while a third of the requests fail, are dropped before or after
// the service did the work, or are slowed down. Afterwards the service holds
// exactly one completed payment per logical payment.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of payments under faults; skipped with -short")
	}
	ignoreBefore := goleak.IgnoreCurrent()
	seed := envUint(t, "PAYMENTS_CHAOS_SEED", rand.Uint64())
	n := int(envUint(t, "PAYMENTS_CHAOS_PAYMENTS", chaosDefaultPayments))
	require.GreaterOrEqual(t, n, chaosWorkers, "PAYMENTS_CHAOS_PAYMENTS")
	t.Logf("seed %d (replay with PAYMENTS_CHAOS_SEED=%d), %d payments", seed, seed, n)

	// Every request and event of the run must stay in the fake's logs,
	// which the checks below read whole: a call makes at most
	// chaosRetries+1 attempts and a payment two calls; the factor 4 leaves
	// room for net/http's own resends and the late retries.
	logLimit := 4*2*(chaosRetries+1)*n + 1000
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: logLimit}))
	t.Cleanup(srv.Close)
	// The SDK's own default transport, not the fake's: its goroutines must
	// be gone once the server has closed the connections.
	c, err := payments.NewClient(srv.APIKey(),
		payments.WithBaseURL(srv.URL()),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: chaosRetries + 1}),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 20 * time.Millisecond}),
	)
	require.NoError(t, err)

	recipients := make([]string, chaosWorkers)
	for i := range recipients {
		r, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
			AccountNumber: payments.AccountNumber(fmt.Sprintf("01234567%02d", i)), AccountName: fmt.Sprintf("Chaos Recipient %d", i),
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		})
		require.NoError(t, err)
		recipients[i] = r.ID
	}
	before := len(srv.Requests())

	lps := make([]*logical, n)
	for i := range lps {
		ref := fmt.Sprintf("chaos-%d-%04d", seed%10000, i)
		lps[i] = &logical{ref: ref, params: &payments.PaymentInitiateParams{
			Amount:      payments.Amount{Decimal: decimal.New(int64(100_000+i*137), -2)}, // 1000.00, 1001.37, ...
			Currency:    "NGN",
			RecipientID: recipients[i%chaosWorkers],
			Reference:   ref,
			Description: "chaos test",
		}}
	}

	require.NoError(t, injectStorm(srv, chaosRate, chaosFaults, seed))
	begin := time.Now()
	work := make(chan *logical)
	var wg sync.WaitGroup
	for range chaosWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lp := range work {
				lp.run(c)
			}
		}()
	}
	for _, lp := range lps {
		work <- lp
	}
	close(work)
	wg.Wait()
	stormTime := time.Since(begin)
	srv.ClearFaults()
	storm := srv.Requests()[before:]
	require.Less(t, len(srv.Requests()), logLimit, "the server's request log was not cut")

	// Every call succeeded or failed in the documented way.
	var (
		failedInit, failedConfirm int
		attempts                  int
		initKeys                  = map[string]bool{}
		confirmKeys               = map[string]bool{}
	)
	for _, lp := range lps {
		attempts += lp.attempts
		initKeys[lp.initKey] = true
		if lp.initErr != nil {
			failedInit++
			checkCallError(t, lp.ref+" initiate", lp.initErr)
			continue
		}
		confirmKeys[lp.confirmKey] = true
		if lp.confirmErr != nil {
			failedConfirm++
			checkCallError(t, lp.ref+" confirm", lp.confirmErr)
		}
	}
	assert.Len(t, initKeys, n, "each initiate call has its own key")
	assert.NotContains(t, initKeys, "")

	// On the wire: every attempt of a call carried that call's key, and
	// every call's key reached the service.
	seenKeys := map[string]map[string]bool{}
	faults := map[string]int{}
	faulted := 0
	for _, rec := range storm {
		if seenKeys[rec.Path] == nil {
			seenKeys[rec.Path] = map[string]bool{}
		}
		seenKeys[rec.Path][rec.IdempotencyKey] = true
		if rec.Fault != "" {
			faulted++
			faults[faultName(rec)]++
		}
	}
	assert.Equal(t, initKeys, seenKeys["/payments/initiate"], "initiate keys on the wire")
	assert.Equal(t, confirmKeys, seenKeys["/payments/confirm"], "confirm keys on the wire")
	assert.Len(t, seenKeys, 2, "no other path was called")
	share := float64(faulted) / float64(len(storm))
	assert.InDelta(t, chaosRate, share, 0.08, "about a third of requests were hit")
	for _, f := range chaosFaults {
		name := faultName(paymentstest.RequestRecord{Fault: faultKind(f), StatusCode: f.Status})
		assert.Positive(t, faults[name], "the storm injected %s", name)
	}
	// net/http itself resends a request carrying an Idempotency-Key when a
	// reused connection closes before any byte of the answer: the service
	// then sees more requests than the SDK counts attempts. Never fewer.
	assert.GreaterOrEqual(t, len(storm), attempts, "the server saw every attempt the SDK reports")

	// The calls that failed after all their retries are retried later with
	// the same key, without faults, as the README tells merchants to: each
	// converges on exactly one payment.
	for _, lp := range lps {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		switch {
		case lp.initErr != nil:
			stored := srv.PaymentsByReference(lp.ref)
			require.LessOrEqual(t, len(stored), 1, "%s: a failed initiate made at most one payment", lp.ref)
			p, err := c.Payments.Initiate(ctx, lp.params, payments.WithIdempotencyKey(lp.initKey))
			require.NoError(t, err, lp.ref)
			assert.Equal(t, lp.initKey, p.LastResponse().IdempotencyKey)
			if len(stored) == 1 {
				assert.Equal(t, stored[0].ID, p.ID, "%s: the retry returns the payment the lost attempt made", lp.ref)
			}
			lp.initiated = p
			done, err := c.Payments.Confirm(ctx, p.ConfirmParams())
			require.NoError(t, err, lp.ref)
			lp.confirmed = done
		case lp.confirmErr != nil:
			done, err := c.Payments.Confirm(ctx, lp.initiated.ConfirmParams(), payments.WithIdempotencyKey(lp.confirmKey))
			require.NoError(t, err, "%s: confirm retried with its key", lp.ref)
			assert.Equal(t, lp.confirmKey, done.LastResponse().IdempotencyKey)
			lp.confirmed = done
		}
		cancel()
	}

	// The service holds exactly one payment per logical payment, completed
	// exactly once, with the amount asked for.
	completedEvents := map[string]int{}
	initiatedEvents := 0
	events := srv.Events()
	require.Less(t, len(events), logLimit, "the server's event log was not cut")
	for _, ev := range events {
		switch ev.Type {
		case payments.EventPaymentCompleted:
			var d struct {
				ID string `json:"id"`
			}
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			completedEvents[d.ID]++
		case payments.EventPaymentInitiated:
			initiatedEvents++
		}
	}
	duplicates, lost := 0, 0
	for _, lp := range lps {
		stored := srv.PaymentsByReference(lp.ref)
		switch {
		case len(stored) == 0:
			lost++
			continue
		case len(stored) > 1:
			duplicates += len(stored) - 1
		}
		s := stored[0]
		assert.Equal(t, payments.PaymentStatusCompleted, s.Status, lp.ref)
		assert.True(t, s.Amount.Equal(lp.params.Amount.Decimal), "%s: amount %s, asked %s", lp.ref, s.Amount, lp.params.Amount)
		assert.Equal(t, 1, completedEvents[s.ID], "%s completed exactly once", lp.ref)
		if assert.NotNil(t, lp.confirmed, lp.ref) {
			assert.Equal(t, s.ID, lp.confirmed.ID, lp.ref)
			assert.Equal(t, s.ID, lp.initiated.ID, lp.ref)
			assert.Equal(t, payments.PaymentStatusCompleted, lp.confirmed.Status, lp.ref)
		}
	}
	assert.Zero(t, duplicates, "duplicate payments")
	assert.Zero(t, lost, "lost payments")
	assert.Len(t, srv.Payments(), n, "no payment beyond the logical ones")
	assert.Equal(t, n, initiatedEvents, "each payment was initiated once")
	assert.Len(t, completedEvents, n, "each payment was completed")

	// Nothing keeps running: the fake's goroutines, and the client's
	// connections once the fake has closed its side.
	srv.Close()
	goleak.VerifyNone(t, ignoreBefore)

	kinds := make([]string, 0, len(faults))
	for k := range faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, faults[k]))
	}
	sort.Strings(kinds)
	t.Logf("chaos figures (seed %d, %s):", seed, time.Since(begin).Round(time.Millisecond))
	t.Logf("  logical payments           %d (initiate + confirm, %d goroutines, one Client)", n, chaosWorkers)
	t.Logf("  HTTP requests at server    %d (%d attempts counted by the SDK; %d resent by net/http)", len(storm), attempts, len(storm)-attempts)
	t.Logf("  faults injected            %d (%.1f%%): %s", faulted, 100*share, strings.Join(kinds, ", "))
	t.Logf("  SDK retries                %d", attempts-2*n+failedInit)
	t.Logf("  failed after all retries   %d initiate, %d confirm; all converged on retry with the same key", failedInit, failedConfirm)
	t.Logf("  duplicates %d, lost %d, completed exactly once %d/%d", duplicates, lost, len(completedEvents), n)
	t.Logf("  storm wall time            %s", stormTime.Round(time.Millisecond))
}

// requestsWithKey counts the requests the server saw with an idempotency key.
func requestsWithKey(srv *paymentstest.Server, key string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.IdempotencyKey == key {
			n++
		}
	}
	return n
}

// TestFailedCallConvergesWithItsKey is the promise behind IdempotencyKeyOf,
// made certain rather than left to the storm's luck: a call whose first
// attempt did the work, and whose every answer was then lost or refused,
// fails after all its retries with an error naming its key; retried later
// with that key, it returns what the first attempt did and does nothing
// twice. Initiate and Confirm, ending in an *APIError and in a
// *TransportError.
func TestFailedCallConvergesWithItsKey(t *testing.T) {
	for _, tail := range []struct {
		name   string
		inject func(*paymentstest.Server)
		check  func(*testing.T, error)
	}{
		{"APIError", func(s *paymentstest.Server) {
			require.NoError(t, s.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 20}))
		}, func(t *testing.T, err error) {
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
			assert.GreaterOrEqual(t, apiErr.Attempts, chaosRetries+1, "the retries, and net/http's own re-send of the dropped attempt")
		}},
		{"TransportError", func(s *paymentstest.Server) {
			require.NoError(t, s.InjectFault(paymentstest.Fault{Drop: true, Times: 20}))
		}, func(t *testing.T, err error) {
			var tErr *payments.TransportError
			require.ErrorAs(t, err, &tErr)
			assert.GreaterOrEqual(t, tErr.Attempts, chaosRetries+1, "the retries, and net/http's own re-send of the dropped attempt")
		}},
	} {
		t.Run(tail.name, func(t *testing.T) {
			srv := paymentstest.NewServer()
			defer srv.Close()
			c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: chaosRetries + 1}))
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
				AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
			})
			require.NoError(t, err)
			params := &payments.PaymentInitiateParams{
				Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-converge",
			}

			require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1}))
			tail.inject(srv)
			_, err = c.Payments.Initiate(ctx, params)
			tail.check(t, err)
			checkCallError(t, "initiate", err)
			key := keyOf(err)
			assert.Equal(t, requestsWithKey(srv, key), attemptsOf(err), "Attempts counts every request the service saw")
			stored := srv.PaymentsByReference(params.Reference)
			require.Len(t, stored, 1, "the first attempt did the work")
			srv.ClearFaults()
			p, err := c.Payments.Initiate(ctx, params, payments.WithIdempotencyKey(key))
			require.NoError(t, err)
			assert.Equal(t, stored[0].ID, p.ID, "the retry returns the payment made the first time")
			assert.Equal(t, stored[0].Quote.QuoteID, p.Quote.QuoteID)
			assert.Len(t, srv.PaymentsByReference(params.Reference), 1)

			require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1}))
			tail.inject(srv)
			_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
			tail.check(t, err)
			checkCallError(t, "confirm", err)
			key = keyOf(err)
			assert.Equal(t, requestsWithKey(srv, key), attemptsOf(err), "Attempts counts every request the service saw")
			stored = srv.PaymentsByReference(params.Reference)
			require.Len(t, stored, 1)
			assert.Equal(t, payments.PaymentStatusCompleted, stored[0].Status, "the first attempt did the work")
			srv.ClearFaults()
			done, err := c.Payments.Confirm(ctx, p.ConfirmParams(), payments.WithIdempotencyKey(key))
			require.NoError(t, err)
			assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
			assert.Equal(t, p.ID, done.ID)

			completed := 0
			for _, ev := range srv.Events() {
				if ev.Type == payments.EventPaymentCompleted {
					completed++
				}
			}
			assert.Equal(t, 1, completed, "executed once")
			assert.Len(t, srv.Payments(), 1)
			reqs := srv.Requests()
			assert.True(t, reqs[len(reqs)-1].Replayed, "the late retry got the stored answer")
		})
	}
}
