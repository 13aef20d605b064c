package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

const surpriseLogMessage = "payments: the service differs from the SDK's assumptions (logged once; see docs/assumptions.md)"

// TestHandlerSurprisesOncePerKind: each kind of surprise a delivery can
// hold, met in two deliveries, gives one warning line (kind, detail) and
// reaches the DeliveryObserver twice; the answers are those without it.
func TestHandlerSurprisesOncePerKind(t *testing.T) {
	body := func(n int, event, extra, data string) []byte {
		return []byte(fmt.Sprintf(`{"id":"00000000-0000-4000-8000-%012d","event":%q,"created_at":"2024-05-01T10:00:00Z"%s,"data":%s}`,
			n, event, extra, data))
	}
	payment := `{"id":"p1","reference":"r","status":"completed","amount":"10.00","currency":"NGN"}`
	for _, tc := range []struct {
		name    string
		request func(n int) *http.Request
		status  int
		want    payments.Surprise
	}{
		{"event kind", func(n int) *http.Request {
			return whDelivery(body(n, "payout.settled", "", `{}`), whNow, whSecret)
		}, http.StatusOK, payments.Surprise{Kind: payments.SurpriseEventKind, Detail: "payout.settled"}},
		{"body member", func(n int) *http.Request {
			return whDelivery(body(n, "payment.completed", `,"livemode":"SECRET-VALUE-4242"`, payment), whNow, whSecret)
		}, http.StatusOK, payments.Surprise{Kind: payments.SurpriseUnknownField, Detail: "event.livemode"}},
		{"payment status", func(n int) *http.Request {
			return whDelivery(body(n, "payment.completed", "", `{"id":"p1","status":"processing","amount":"1"}`), whNow, whSecret)
		}, http.StatusOK, payments.Surprise{Kind: payments.SurprisePaymentStatus, Detail: "processing"}},
		{"unknown signature header", func(n int) *http.Request {
			req := whDelivery(body(n, "payment.completed", "", payment), whNow, whSecret)
			req.Header.Set("X-Payments-Signature-256", "sha256=SECRET-VALUE-4242")
			return req
		}, http.StatusOK, payments.Surprise{Kind: payments.SurpriseSignatureHeader, Detail: "unknown header X-Payments-Signature-256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []payments.Surprise
			obs := func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
				return ctx, func(r webhook.DeliveryResult) {
					mu.Lock()
					got = append(got, r.Surprises...)
					mu.Unlock()
				}
			}
			logs := new(testlog.Buffer)
			h := whHandler(t, whRecorderFn(), webhook.WithDeliveryObserver(obs),
				webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
			for n := range 2 {
				assert.Equal(t, tc.status, whServe(h, tc.request(n)).Code)
			}
			assert.Equal(t, []payments.Surprise{tc.want, tc.want}, got, "the observer sees every one")
			lines, err := logs.JSONLines()
			require.NoError(t, err)
			var surprises []map[string]any
			for _, l := range lines {
				if l["msg"] == surpriseLogMessage {
					surprises = append(surprises, l)
				}
			}
			require.Len(t, surprises, 1, logs.String())
			assert.Equal(t, "WARN", surprises[0]["level"])
			assert.Equal(t, string(tc.want.Kind), surprises[0]["kind"])
			assert.Equal(t, tc.want.Detail, surprises[0]["detail"])
			assert.NotContains(t, logs.String(), "SECRET-VALUE-4242", "values are never logged")
			assert.NotContains(t, logs.String(), whSecret)
		})
	}
}

// TestHandlerNoSurpriseForTheAssumedDelivery: a delivery as assumed, by
// either scheme, reports nothing; a Verifier of your own is not second-
// guessed about its headers.
func TestHandlerNoSurpriseForTheAssumedDelivery(t *testing.T) {
	var got []payments.Surprise
	obs := func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
		return ctx, func(r webhook.DeliveryResult) { got = append(got, r.Surprises...) }
	}
	h := whHandler(t, whRecorderFn(), webhook.WithDeliveryObserver(obs))
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whEventJSON(whEventID, payments.EventPaymentCompleted,
		`{"id":"p1","status":"completed","amount":"1"}`), whNow, whSecret)).Code)
	own := webhook.NewHandler(verifierFunc(func([]byte, http.Header) error { return nil }), whRecorderFn(), webhook.WithDeliveryObserver(obs))
	req := whDelivery(whEventJSON(whEventID, payments.EventPaymentCompleted, `{}`), whNow, whSecret)
	req.Header.Del(webhook.SignatureHeader)
	req.Header.Set("X-Own-Signature", "x")
	assert.Equal(t, http.StatusOK, whServe(own, req).Code)
	assert.Empty(t, got)
}

type verifierFunc func([]byte, http.Header) error

func (f verifierFunc) Verify(b []byte, h http.Header) error { return f(b, h) }

// TestHandlerCatchesADifferentSignatureHeader: the fake told to sign its
// deliveries under another header (paymentstest.WithDifferences
// "signature-header") gets 401 from the handler, whose refusal says why
// (ErrNoSignatureHeader, in the result and the log line), so that the logs
// say why every delivery fails; as the delivery did not verify, its
// headers are no surprise the handler remembers (issue 45). payments
// doctor names the header the service used, row "Webhook signature". (A
// test event marked otherwise than the assumed reference prefix,
// "test-marker", cannot be told from a real one at run time: doctor names
// it, row "Test events".)
func TestHandlerCatchesADifferentSignatureHeader(t *testing.T) {
	const secret = "whsec_differs_signature_header"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	var mu sync.Mutex
	var results []webhook.DeliveryResult
	obs := func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
		return ctx, func(r webhook.DeliveryResult) {
			mu.Lock()
			defer mu.Unlock()
			results = append(results, r)
		}
	}
	receiver := httptest.NewServer(webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil },
		webhook.WithDeliveryObserver(obs)))
	defer receiver.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}), paymentstest.WithDifferences("signature-header"))
	defer srv.Close()
	_, err = srv.Client().Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second) // a bound for a loaded machine, not a measurement
	for {
		mu.Lock()
		n := len(results)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, results, "no delivery reached the handler")
	assert.Equal(t, http.StatusUnauthorized, results[0].StatusCode)
	assert.ErrorIs(t, results[0].Err, webhook.ErrNoSignatureHeader)
	assert.Empty(t, results[0].Surprises, "an unsigned request is looked at for nothing")
}

// TestUnsignedRequestChangesNoSurpriseMemory (issue 45): an unsigned
// request carrying 300 made-up signature headers is answered 401 and
// looked at for nothing: no surprise logged or reported, none remembered.
// A signed delivery replayed 100 times (headers are not signed) with as
// many reports at most 4 each, and the handler remembers and logs at most
// 16 in all. The service's real change that follows (a new event kind) is
// still logged, in both of the handler's modes.
func TestUnsignedRequestChangesNoSurpriseMemory(t *testing.T) {
	made := func(req *http.Request) *http.Request {
		for i := range 300 {
			req.Header.Set(fmt.Sprintf("X-Signature-%03d", i), "x")
		}
		return req
	}
	for name, build := range map[string]func(...webhook.HandlerOption) *webhook.Handler{
		"NewHandler": func(o ...webhook.HandlerOption) *webhook.Handler { return whHandler(t, whRecorderFn(), o...) },
		"NewQueueHandler": func(o ...webhook.HandlerOption) *webhook.Handler {
			return webhook.NewQueueHandler(whVerifier(t, whSecret), new(queueRecorder).enqueue, o...)
		},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var got [][]payments.Surprise
			obs := func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
				return ctx, func(r webhook.DeliveryResult) {
					mu.Lock()
					got = append(got, r.Surprises)
					mu.Unlock()
				}
			}
			logs := new(testlog.Buffer)
			h := build(webhook.WithDeliveryObserver(obs), webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
			surprises := func() []map[string]any { return rcLines(t, logs, surpriseLogMessage) }

			unsigned := made(whDelivery(whEventJSON("00000000-0000-4000-8000-000000000001", "payout.settled", `{}`), whNow, whSecret))
			unsigned.Header.Del(webhook.SignatureHeader)
			assert.Equal(t, http.StatusUnauthorized, whServe(h, unsigned).Code)
			forged := made(whDelivery(whEventJSON("00000000-0000-4000-8000-000000000002", "payout.settled", `{}`), whNow, "whsec_not_the_service"))
			assert.Equal(t, http.StatusUnauthorized, whServe(h, forged).Code)
			assert.Empty(t, surprises(), "nothing logged for a request that did not verify")
			assert.Equal(t, [][]payments.Surprise{nil, nil}, got, "nothing reported either")

			for range 100 {
				assert.Equal(t, http.StatusOK, whServe(h, made(whDelivery(whPayload(), whNow, whSecret))).Code)
			}
			require.Len(t, got, 102)
			assert.Len(t, got[2], 4, "at most 4 unknown signature headers per delivery")
			assert.Len(t, got[101], 4, "every delivery reports its own to the observer")
			assert.Len(t, surprises(), 16, "at most 16 signature headers remembered and logged")

			real := whDelivery(whEventJSON("00000000-0000-4000-8000-000000000003", "payout.settled", `{}`), whNow, whSecret)
			assert.Equal(t, http.StatusOK, whServe(h, real).Code)
			lines := surprises()
			require.Len(t, lines, 17, logs.String())
			assert.Equal(t, string(payments.SurpriseEventKind), lines[16]["kind"])
			assert.Equal(t, "payout.settled", lines[16]["detail"])
		})
	}
}
