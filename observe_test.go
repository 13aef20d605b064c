package payments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// mwServer answers every request with status from answer(n), n counting
// requests from 1, and records the headers it saw.
type mwServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	n       atomic.Int64
}

func newMWServer(t *testing.T, answer func(n int64, w http.ResponseWriter)) *mwServer {
	t.Helper()
	s := &mwServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		answer(s.n.Add(1), w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *mwServer) seen() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func answerOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"success":true,"message":"ok","stan":"stan-1","data":{"id":"p","reference":"order-1","status":"pending","amount":"15000.50","currency":"NGN","quote":{"quote_id":"q-1","fee":"0","exchange_rate":"1","total_amount":"15000.50"}}}`)
}

func mwClient(t *testing.T, url string, opts ...payments.Option) *payments.Client {
	t.Helper()
	c, err := payments.NewClient(harnessKey, append([]payments.Option{payments.WithBaseURL(url),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond})}, opts...)...)
	require.NoError(t, err)
	return c
}

// TestMiddlewareSeesEveryAttemptInOrder: client middleware runs first in the
// order given, then the call's own; each sees every attempt, with the
// operation, the attempt number and the idempotency key.
func TestMiddlewareSeesEveryAttemptInOrder(t *testing.T) {
	srv := newMWServer(t, func(n int64, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		answerOK(w)
	})
	var (
		mu    sync.Mutex
		trace []string
		seen  []payments.Attempt
	)
	record := func(name string) payments.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			mu.Lock()
			trace = append(trace, name+" in")
			if name == "call" {
				a, ok := payments.AttemptFromContext(req.Context())
				require.True(t, ok)
				seen = append(seen, a)
			}
			mu.Unlock()
			resp, err := next(req)
			mu.Lock()
			trace = append(trace, name+" out")
			mu.Unlock()
			return resp, err
		}
	}
	c := mwClient(t, srv.URL, payments.WithMiddleware(record("client-1"), record("client-2")))
	p, err := c.Payments.Initiate(context.Background(), validInitiateParams(),
		payments.WithMiddleware(record("call")), payments.WithIdempotencyKey("order-1-pay"))
	require.NoError(t, err)
	assert.Equal(t, 2, p.LastResponse().Attempts)

	one := []string{"client-1 in", "client-2 in", "call in", "call out", "client-2 out", "client-1 out"}
	assert.Equal(t, append(append([]string{}, one...), one...), trace, "two attempts, each through every middleware in order")
	op := payments.Operation{Name: "payments.initiate", Method: http.MethodPost, PathTemplate: "/payments/initiate"}
	assert.Equal(t, []payments.Attempt{
		{Operation: op, Number: 1, IdempotencyKey: "order-1-pay"},
		{Operation: op, Number: 2, IdempotencyKey: "order-1-pay"},
	}, seen)

	// Another call without the call's middleware: only the client's run.
	trace = nil
	_, err = c.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)
	assert.Equal(t, []string{"client-1 in", "client-2 in", "client-2 out", "client-1 out"}, trace)
}

// TestMiddlewareCannotRemoveOwnedHeaders: a middleware may add headers, but
// those the SDK owns are set again after it.
func TestMiddlewareCannotRemoveOwnedHeaders(t *testing.T) {
	srv := newMWServer(t, func(_ int64, w http.ResponseWriter) { answerOK(w) })
	meddle := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		req.Header.Del("Authorization")
		req.Header.Set("Idempotency-Key", "forged")
		req.Header.Set("User-Agent", "forged")
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		return next(req)
	}
	c := mwClient(t, srv.URL, payments.WithMiddleware(meddle))
	_, err := c.Payments.Initiate(context.Background(), validInitiateParams(), payments.WithIdempotencyKey("order-2-pay"))
	require.NoError(t, err)
	h := srv.seen()[0]
	assert.Equal(t, "Bearer "+harnessKey, h.Get("Authorization"))
	assert.Equal(t, "order-2-pay", h.Get("Idempotency-Key"))
	assert.Contains(t, h.Get("User-Agent"), "payments-go/")
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", h.Get("Traceparent"), "added headers go out")
}

// TestMiddlewareCanAnswerWithoutTheNetwork: a middleware that does not call
// next answers the attempt itself (a circuit breaker, say).
func TestMiddlewareCanAnswerWithoutTheNetwork(t *testing.T) {
	srv := newMWServer(t, func(_ int64, w http.ResponseWriter) { answerOK(w) })
	broken := errors.New("circuit open")
	c := mwClient(t, srv.URL, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	_, err := c.Payments.Initiate(context.Background(), validInitiateParams(),
		payments.WithMiddleware(func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			return nil, broken
		}))
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr)
	assert.ErrorIs(t, err, broken)
	assert.Empty(t, srv.seen())
}

// TestAttemptTimeoutBoundsOneAttempt: an attempt that outlives its timeout is
// cut (reading the body included) and, without an answer, retried; the
// caller's context, longer, bounds the whole call.
func TestAttemptTimeoutBoundsOneAttempt(t *testing.T) {
	stall := make(chan struct{})
	srv := newMWServer(t, func(n int64, w http.ResponseWriter) {
		switch n {
		case 1: // no answer at all
			<-stall
		case 2: // headers, then a body that never ends
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"success":true,`)
			w.(http.Flusher).Flush()
			<-stall
		default:
			answerOK(w)
		}
	})
	t.Cleanup(func() { close(stall) }) // before the server's Close, which waits for its handlers
	c := mwClient(t, srv.URL, payments.WithRetries(payments.RetryPolicy{AttemptTimeout: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Payments.Initiate(ctx, validInitiateParams(), payments.WithRetries(payments.RetryPolicy{AttemptTimeout: 100 * time.Millisecond}))
	// The first attempt got no answer in time and was retried; the second
	// got its status but not its body in time: a 2xx cut short is not
	// retried (the outcome is unknown), as without a timeout.
	var merr *payments.MalformedResponseError
	require.ErrorAs(t, err, &merr)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 2, merr.Response.Attempts)
	assert.Less(t, time.Since(start), 5*time.Second, "the call's timeout overrides the client's hour")
	assert.NoError(t, ctx.Err(), "the caller's context is still alive")

	p, err := c.Payments.Initiate(ctx, validInitiateParams(), payments.WithRetries(payments.RetryPolicy{AttemptTimeout: 100 * time.Millisecond}))
	require.NoError(t, err)
	assert.Equal(t, 1, p.LastResponse().Attempts)
}

// TestAttemptTimeoutOptions: invalid values are refused where they are given.
func TestAttemptTimeoutOptions(t *testing.T) {
	_, err := payments.NewClient(harnessKey, payments.WithBaseURL(harnessBase), payments.WithRetries(payments.RetryPolicy{AttemptTimeout: -time.Second}))
	require.ErrorIs(t, err, payments.ErrInvalidConfig)
	c := mwClient(t, harnessBase)
	_, err = c.Payments.Initiate(context.Background(), validInitiateParams(), payments.WithRetries(payments.RetryPolicy{AttemptTimeout: -time.Second}))
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Has("WithRetries"))
}

type ctxMark struct{}

// TestObserverWrapsTheOperation: the observer sees each operation once; the
// context it returns reaches every attempt's middleware; its end function
// gets the outcome.
func TestObserverWrapsTheOperation(t *testing.T) {
	srv := newMWServer(t, func(n int64, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		answerOK(w)
	})
	var (
		ops     []payments.Operation
		results []payments.OperationResult
		marks   []any
	)
	obs := func(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
		ops = append(ops, op)
		return context.WithValue(ctx, ctxMark{}, op.Name), func(r payments.OperationResult) { results = append(results, r) }
	}
	mark := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		marks = append(marks, req.Context().Value(ctxMark{}))
		return next(req)
	}
	c := mwClient(t, srv.URL, payments.WithObserver(obs), payments.WithMiddleware(mark))
	_, err := c.Payments.Initiate(context.Background(), validInitiateParams(), payments.WithIdempotencyKey("order-3-pay"))
	require.NoError(t, err)
	_, err = c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"})
	require.NoError(t, err)

	require.Len(t, ops, 2)
	assert.Equal(t, payments.Operation{Name: "recipients.update", Method: http.MethodPut, PathTemplate: "/payments/recipients/{id}"}, ops[1])
	assert.Equal(t, []any{"payments.initiate", "payments.initiate", "recipients.update"}, marks)
	require.Len(t, results, 2)
	assert.Equal(t, payments.OperationResult{StatusCode: 200, Stan: "stan-1", IdempotencyKey: "order-3-pay", Attempts: 2}, results[0])
}

// TestObserversNestAndSeeInitiateChecks: two observers nest (the first ends
// last), and a 200 without a quote id fails inside the operation, so the
// observers see the error.
func TestObserversNestAndSeeInitiateChecks(t *testing.T) {
	srv := newMWServer(t, func(_ int64, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"stan":"s","data":{"id":"p","reference":"order-1","status":"pending","amount":"15000.50","currency":"NGN"}}`)
	})
	var events []string
	named := func(name string) payments.OperationObserver {
		return func(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
			events = append(events, name+" start")
			return ctx, func(r payments.OperationResult) {
				events = append(events, name+" end: "+fmt.Sprint(errors.Is(r.Err, payments.ErrMalformedResponse)))
			}
		}
	}
	c := mwClient(t, srv.URL, payments.WithObserver(named("a")), payments.WithObserver(named("b")), payments.WithObserver(nil))
	_, err := c.Payments.Initiate(context.Background(), validInitiateParams())
	require.ErrorIs(t, err, payments.ErrMalformedResponse)
	assert.Contains(t, err.Error(), "carries no quote")
	assert.Equal(t, []string{"a start", "b start", "b end: true", "a end: true"}, events)
}

// markHandler records, for each log record, its message and the ctxMark of
// its context.
type markHandler struct {
	slog.Handler
	events *[]string
}

func (h markHandler) Handle(ctx context.Context, r slog.Record) error {
	*h.events = append(*h.events, fmt.Sprint(r.Message, " ", ctx.Value(ctxMark{})))
	return nil
}

// TestLoggerRunsAsTheInnermostObserver: WithLogger takes the observers'
// path: its line is written inside every observer, under the context they
// returned (a tracing span's, say), before they end.
func TestLoggerRunsAsTheInnermostObserver(t *testing.T) {
	srv := newMWServer(t, func(_ int64, w http.ResponseWriter) { answerOK(w) })
	var events []string
	obs := func(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
		events = append(events, "start")
		return context.WithValue(ctx, ctxMark{}, "span"), func(payments.OperationResult) { events = append(events, "end") }
	}
	logger := slog.New(markHandler{slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}), &events})
	c := mwClient(t, srv.URL, payments.WithLogger(logger), payments.WithObserver(obs))
	_, err := c.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)
	assert.Equal(t, []string{"start", "payments: request span", "end"}, events)
}

// net/http writes a request carrying an Idempotency-Key a second time, on
// its own, when the reused connection it went out on closes before any byte
// of the answer. Such a re-send may have been processed by the service too:
// Attempts, the observer and the log line count it, even with no retries
// allowed.
func TestAttemptsCountTheTransportsResends(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	var logs bytes.Buffer
	var observed payments.OperationResult
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}),
		payments.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		payments.WithObserver(func(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
			return ctx, func(r payments.OperationResult) {
				if op.Name == "payments.confirm" {
					observed = r
				}
			}
		}))
	ctx := context.Background()
	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("100")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-resent",
	})
	require.NoError(t, err)
	require.Equal(t, 1, p.LastResponse().Attempts, "a call written once counts one attempt")

	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1})) // the confirm is processed, its answer lost, on a reused connection
	paid, err := c.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err, "net/http re-sent the keyed request and the service replayed its answer")

	var confirms []paymentstest.RequestRecord
	for _, rec := range srv.Requests() {
		if rec.Path == "/payments/confirm" {
			confirms = append(confirms, rec)
		}
	}
	require.Len(t, confirms, 2, "the service saw the confirm twice")
	assert.Equal(t, confirms[0].IdempotencyKey, confirms[1].IdempotencyKey)
	assert.Equal(t, 2, paid.LastResponse().Attempts)
	assert.Equal(t, 2, observed.Attempts)
	assert.Contains(t, logs.String(), `"operation":"payments.confirm"`)
	assert.Regexp(t, `"operation":"payments.confirm"[^\n]*"attempts":2`, logs.String())
	assert.Len(t, srv.PaymentsByReference("order-resent"), 1, "paid once")
}
