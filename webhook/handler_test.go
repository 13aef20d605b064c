package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// whRecorder counts the calls of an EventFunc and the ones that succeeded.
type whRecorder struct {
	calls     atomic.Int64
	successes atomic.Int64
	mu        sync.Mutex
	events    []*payments.Event
}

// fn returns an EventFunc that records the event and returns what result
// says for the n-th call (1-based).
func (r *whRecorder) fn(result func(n int64) error) webhook.EventFunc {
	return func(_ context.Context, ev *payments.Event) error {
		n := r.calls.Add(1)
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		err := result(n)
		if err == nil {
			r.successes.Add(1)
		}
		return err
	}
}

func whOK(int64) error { return nil }

// whHandler builds a handler with a verifier on the fixed test clock.
func whHandler(t *testing.T, fn webhook.EventFunc, opts ...webhook.HandlerOption) *webhook.Handler {
	t.Helper()
	return webhook.NewHandler(whVerifier(t, whSecret), fn, opts...)
}

// whDelivery is a POST of payload signed with secret at signedAt.
func whDelivery(payload []byte, signedAt time.Time, secret string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(payload, signedAt, secret))
	return req
}

func whServe(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestWebhookHandlerValidDelivery(t *testing.T) {
	var rec whRecorder
	var amount string
	h := whHandler(t, func(ctx context.Context, ev *payments.Event) error {
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		amount = p.Amount.String()
		return rec.fn(whOK)(ctx, ev)
	})
	resp := whServe(h, whDelivery(whPayload(), whNow, whSecret))
	assert.Equal(t, http.StatusOK, resp.Code)
	assert.EqualValues(t, 1, rec.calls.Load())
	require.Len(t, rec.events, 1)
	assert.Equal(t, whEventID, rec.events[0].ID)
	assert.Equal(t, payments.EventPaymentCompleted, rec.events[0].Type)
	assert.Equal(t, "100", amount)
}

func TestWebhookHandlerRefusesBadSignatures(t *testing.T) {
	payload := whPayload()
	cases := map[string]*http.Request{
		"missing header": func() *http.Request {
			r := whDelivery(payload, whNow, whSecret)
			r.Header.Del(webhook.SignatureHeader)
			return r
		}(),
		"malformed header": func() *http.Request {
			r := whDelivery(payload, whNow, whSecret)
			r.Header.Set(webhook.SignatureHeader, "t=abc,v1=00")
			return r
		}(),
		"tampered body": func() *http.Request {
			r := whDelivery(payload, whNow, whSecret)
			r.Body = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Replace(string(payload), "100.00", "999.00", 1))).Body
			return r
		}(),
		"wrong secret":     whDelivery(payload, whNow, "whsec_someone_else"),
		"old timestamp":    whDelivery(payload, whNow.Add(-time.Hour), whSecret),
		"future timestamp": whDelivery(payload, whNow.Add(time.Hour), whSecret),
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			var rec whRecorder
			resp := whServe(whHandler(t, rec.fn(whOK)), req)
			assert.Equal(t, http.StatusUnauthorized, resp.Code)
			assert.Zero(t, rec.calls.Load(), "fn must not run on an unverified delivery")
		})
	}
}

func TestWebhookHandlerRefusesNonEvents(t *testing.T) {
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	for _, body := range []string{`{"hello":"world"}`, `[1,2,3]`, `not json`, ``} {
		resp := whServe(h, whDelivery([]byte(body), whNow, whSecret))
		assert.Equal(t, http.StatusBadRequest, resp.Code, body)
	}
	assert.Zero(t, rec.calls.Load())
}

func TestWebhookHandlerRefusesOtherMethods(t *testing.T) {
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		req := whDelivery(whPayload(), whNow, whSecret)
		req.Method = method
		resp := whServe(h, req)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.Code, method)
		assert.Equal(t, http.MethodPost, resp.Header().Get("Allow"), method)
	}
	assert.Zero(t, rec.calls.Load())
}

func TestWebhookHandlerBodyLimit(t *testing.T) {
	big := whEventJSON(whEventID, payments.EventPaymentCompleted, `{"notes":"`+strings.Repeat("x", 4096)+`"}`)

	t.Run("over a custom limit", func(t *testing.T) {
		var rec whRecorder
		h := whHandler(t, rec.fn(whOK), webhook.WithMaxBodyBytes(1024))
		resp := whServe(h, whDelivery(big, whNow, whSecret))
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("over the limit without a Content-Length", func(t *testing.T) {
		var rec whRecorder
		h := whHandler(t, rec.fn(whOK), webhook.WithMaxBodyBytes(1024))
		req := whDelivery(big, whNow, whSecret)
		req.ContentLength = -1 // as with chunked transfer encoding
		resp := whServe(h, req)
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("over the default limit", func(t *testing.T) {
		var rec whRecorder
		h := whHandler(t, rec.fn(whOK))
		huge := whEventJSON(whEventID, payments.EventPaymentCompleted, `{"notes":"`+strings.Repeat("x", webhook.DefaultMaxBodyBytes)+`"}`)
		resp := whServe(h, whDelivery(huge, whNow, whSecret))
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.Code)
		assert.Zero(t, rec.calls.Load())
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		var rec whRecorder
		h := whHandler(t, rec.fn(whOK), webhook.WithMaxBodyBytes(int64(len(big))))
		resp := whServe(h, whDelivery(big, whNow, whSecret))
		assert.Equal(t, http.StatusOK, resp.Code)
		assert.EqualValues(t, 1, rec.calls.Load())
	})
	// The body's buffer is sized by Content-Length up to 64 KiB: a sender
	// that claims the whole limit and sends a small body costs no more
	// than that before its bytes arrive (counted by the allocator; the
	// delivery itself allocates tens of kilobytes).
	t.Run("a Content-Length larger than the body", func(t *testing.T) {
		var rec whRecorder
		h := whHandler(t, rec.fn(whOK))
		req := whDelivery(whPayload(), whNow, whSecret)
		req.ContentLength = webhook.DefaultMaxBodyBytes
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp := whServe(h, req)
		runtime.ReadMemStats(&after)
		assert.Equal(t, http.StatusOK, resp.Code)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(webhook.DefaultMaxBodyBytes/2), "bytes allocated for one delivery claiming 1 MiB")
	})
}

// TestFunctionErrUnavailableAnswers503: a function whose error wraps
// ErrUnavailable gets the sender a 503, like the handler's own store being
// down, never a 500; the event is released and the redelivery runs it.
func TestFunctionErrUnavailableAnswers503(t *testing.T) {
	var rec whRecorder
	h := whHandler(t, rec.fn(func(n int64) error {
		if n == 1 {
			return fmt.Errorf("ledger: %w: %w", webhook.ErrUnavailable, errors.New("connection refused"))
		}
		return nil
	}))
	payload := whPayload()
	first := whServe(h, whDelivery(payload, whNow, whSecret))
	assert.Equal(t, http.StatusServiceUnavailable, first.Code)
	assert.NotContains(t, first.Body.String(), "connection refused", "the function's error is not sent back")
	retry := whServe(h, whDelivery(payload, whNow.Add(30*time.Second), whSecret))
	assert.Equal(t, http.StatusOK, retry.Code)
	assert.EqualValues(t, 2, rec.calls.Load())
	assert.EqualValues(t, 1, rec.successes.Load())
}

func TestWebhookHandlerFailingFunctionIsRetried(t *testing.T) {
	var rec whRecorder
	h := whHandler(t, rec.fn(func(n int64) error {
		if n == 1 {
			return errors.New("database unavailable")
		}
		return nil
	}))
	payload := whPayload()

	first := whServe(h, whDelivery(payload, whNow, whSecret))
	assert.Equal(t, http.StatusInternalServerError, first.Code, "a failure must make the service retry")
	assert.NotContains(t, first.Body.String(), "database unavailable", "the function's error is not sent back")

	// The service's retry carries the same event, signed anew.
	retry := whServe(h, whDelivery(payload, whNow.Add(30*time.Second), whSecret))
	assert.Equal(t, http.StatusOK, retry.Code)
	assert.EqualValues(t, 2, rec.calls.Load())
	assert.EqualValues(t, 1, rec.successes.Load())

	again := whServe(h, whDelivery(payload, whNow.Add(time.Minute), whSecret))
	assert.Equal(t, http.StatusOK, again.Code)
	assert.EqualValues(t, 2, rec.calls.Load(), "processed once successfully, never again")
}

func TestWebhookHandlerPanickingFunctionReleasesTheEvent(t *testing.T) {
	var rec whRecorder
	var logs bytes.Buffer
	h := whHandler(t, rec.fn(func(n int64) error {
		if n == 1 {
			panic("bug in the merchant's code")
		}
		return nil
	}), webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	payload := whPayload()
	var first *httptest.ResponseRecorder
	require.NotPanics(t, func() { first = whServe(h, whDelivery(payload, whNow, whSecret)) })
	assert.Equal(t, http.StatusInternalServerError, first.Code, "a panic is answered 500, not a cut connection")

	var line struct {
		Level, Msg, Error, Stack string
	}
	require.NoError(t, json.Unmarshal(bytes.SplitN(logs.Bytes(), []byte("\n"), 2)[0], &line))
	assert.Equal(t, "ERROR", line.Level)
	assert.Equal(t, "panic: bug in the merchant's code", line.Error)
	assert.Contains(t, line.Stack, "webhook/handler_test.go", "the stack points at the panicking code")
	assert.NotContains(t, logs.String(), `"amount"`, "the body is never logged")

	resp := whServe(h, whDelivery(payload, whNow, whSecret))
	assert.Equal(t, http.StatusOK, resp.Code, "the event was released, not left in progress")
	assert.EqualValues(t, 2, rec.calls.Load())
}

func TestWebhookHandlerDuplicateAfterSuccess(t *testing.T) {
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	payload := whPayload()
	first := whServe(h, whDelivery(payload, whNow, whSecret))
	second := whServe(h, whDelivery(payload, whNow.Add(2*time.Minute), whSecret))
	assert.Equal(t, http.StatusOK, first.Code)
	assert.Equal(t, http.StatusOK, second.Code)
	assert.EqualValues(t, 1, rec.calls.Load())

	other := whEventJSON("7b2e4d3f-0c5e-4f9b-8c7d-6e5f4a3b2c1d", payments.EventPaymentCompleted, `{"id":"p-2"}`)
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(other, whNow, whSecret)).Code)
	assert.EqualValues(t, 2, rec.calls.Load(), "another event id is processed")
}

// The dedupe is visible: a duplicate of a processed event is logged at info
// (skipped), and one that finds the event in progress at warning (409), each
// with the event's id.
func TestWebhookHandlerLogsDuplicates(t *testing.T) {
	var logs bytes.Buffer
	entered, release := make(chan struct{}), make(chan struct{})
	var rec whRecorder
	h := whHandler(t, rec.fn(func(int64) error {
		close(entered)
		<-release
		return nil
	}), webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), webhook.WithClaimWait(0))
	payload := whPayload()
	done := make(chan int)
	go func() { done <- whServe(h, whDelivery(payload, whNow, whSecret)).Code }()
	<-entered
	assert.Equal(t, http.StatusConflict, whServe(h, whDelivery(payload, whNow, whSecret)).Code)
	close(release)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow, whSecret)).Code)

	out := logs.String()
	assert.Regexp(t, `"level":"WARN","msg":"webhook refused: event is being processed by another delivery","event_id":"`+whEventID+`"[^\n]*"status":409`, out)
	assert.Regexp(t, `"level":"INFO","msg":"duplicate delivery of a processed event: skipped","event_id":"`+whEventID+`"[^\n]*"status":200`, out)
}

func TestWebhookHandlerConcurrentDuplicatesWhileProcessing(t *testing.T) {
	const deliveries = 50
	var rec whRecorder
	entered := make(chan struct{})
	release := make(chan struct{})
	h := whHandler(t, rec.fn(func(int64) error {
		close(entered) // a second call would panic here
		<-release
		return nil
	}))
	payload := whPayload()

	statuses := make(chan int, deliveries)
	var wg sync.WaitGroup
	for range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- whServe(h, whDelivery(payload, whNow, whSecret)).Code
		}()
	}
	<-entered
	// Every other delivery is answered while the first is still running.
	counts := map[int]int{}
	for range deliveries - 1 {
		counts[<-statuses]++
	}
	close(release)
	wg.Wait()
	counts[<-statuses]++

	assert.EqualValues(t, 1, rec.calls.Load())
	assert.Equal(t, map[int]int{http.StatusOK: 1, http.StatusConflict: deliveries - 1}, counts)
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(payload, whNow, whSecret)).Code, "a later retry is answered 200")
	assert.EqualValues(t, 1, rec.calls.Load())
}

func TestWebhookHandlerConcurrentDuplicatesFreeRunning(t *testing.T) {
	const deliveries = 50
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	payload := whPayload()
	var wg sync.WaitGroup
	var ok, conflict atomic.Int64
	start := make(chan struct{})
	for range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			switch whServe(h, whDelivery(payload, whNow, whSecret)).Code {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusConflict:
				conflict.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	assert.EqualValues(t, 1, rec.calls.Load(), "processed exactly once")
	assert.EqualValues(t, deliveries, ok.Load()+conflict.Load(), "every delivery got 200 or 409")
	assert.GreaterOrEqual(t, ok.Load(), int64(1))
}

func TestWebhookHandlerLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var rec whRecorder
	h := whHandler(t, rec.fn(func(n int64) error {
		if n == 1 {
			return errors.New("temporary failure")
		}
		return nil
	}), webhook.WithLogger(logger))

	payload := whEventJSON(whEventID, payments.EventRecipientCreated, `{"account_number":"0123456789","account_name":"Ada Okafor"}`)
	good := whDelivery(payload, whNow, whSecret)
	header := good.Header.Get(webhook.SignatureHeader)
	whServe(h, good)                                                      // fn fails: 500
	whServe(h, whDelivery(payload, whNow, whSecret))                      // processed: 200
	whServe(h, whDelivery(payload, whNow, whSecret))                      // duplicate: 200
	whServe(h, whDelivery(payload, whNow, "whsec_someone_else"))          // 401
	whServe(h, whDelivery([]byte(`{"x":"0123456789"}`), whNow, whSecret)) // 400

	logs := buf.String()
	for _, secret := range []string{whSecret, header, whSignatureOf(t, header), "0123456789", "Ada Okafor"} {
		assert.NotContains(t, logs, secret)
	}
	assert.Contains(t, logs, whEventID)
	assert.Contains(t, logs, "temporary failure", "the function's error is logged")
	assert.Contains(t, logs, `"status":401`)
	assert.Contains(t, logs, `"status":400`)
	assert.Equal(t, 5, strings.Count(logs, "\n"), "one line per delivery:\n%s", logs)
}

func TestNewWebhookHandlerPanicsOnNil(t *testing.T) {
	v := whVerifier(t, whSecret)
	assert.Panics(t, func() { webhook.NewHandler(nil, whRecorderFn()) })
	assert.Panics(t, func() { webhook.NewHandler(v, nil) })
}

func whRecorderFn() webhook.EventFunc {
	var rec whRecorder
	return rec.fn(whOK)
}

// idRecordingStore records the ids the handler claims.
type idRecordingStore struct {
	webhook.MemoryClaimStore
	mu  sync.Mutex
	ids []string
}

func (s *idRecordingStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return s.MemoryClaimStore.Claim(ctx, id)
}

// TestWebhookHandlerStandardWebhooksDedupesOnWebhookID: with the Standard
// Webhooks scheme the handler claims the signed webhook-id, not the id in
// the body.
func TestWebhookHandlerStandardWebhooksDedupesOnWebhookID(t *testing.T) {
	secret, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	v, err := webhook.NewStandardVerifier([]string{secret}, webhook.WithSignatureClock(whClock))
	require.NoError(t, err)
	var rec whRecorder
	store := &idRecordingStore{}
	// Remembering none: every delivery asks the store, which records the id.
	h := webhook.NewHandler(v, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithRecentlyDone(0))
	deliver := func(msgID string, payload []byte) int {
		header, err := webhook.SignStandard(msgID, whNow, payload, secret)
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(payload))
		for k, vs := range header {
			req.Header[k] = vs
		}
		return whServe(h, req).Code
	}
	assert.Equal(t, http.StatusOK, deliver("msg_2Kq9", whPayload()))
	assert.Equal(t, http.StatusOK, deliver("msg_2Kq9", whPayload()), "a redelivery")
	other := whEventJSON("7b2e4d3f-0c5e-4f9b-8c7d-6e5f4a3b2c1d", payments.EventPaymentCompleted, `{"id":"p-2"}`)
	assert.Equal(t, http.StatusOK, deliver("msg_2Kq9", other), "same webhook-id, another body id: still a duplicate")
	assert.EqualValues(t, 1, rec.calls.Load())
	assert.Equal(t, []string{"msg_2Kq9", "msg_2Kq9", "msg_2Kq9"}, store.ids)
	assert.Equal(t, http.StatusBadRequest, deliver("msg_other", []byte("{}")), "signed, but not an event")
}
