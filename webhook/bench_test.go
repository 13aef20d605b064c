package webhook_test

// Benchmarks of webhook reception: verifying and parsing a 2 KiB event, and
// the receiver handler end to end, each beside a hand-written baseline
// (crypto/hmac, encoding/json, a map of seen ids). See BENCHMARKS.md.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/benchbaseline"
	"github.com/paymentsapi/payments-go/webhook"
)

const (
	wbSecret   = "whsec_bench_9Tq2Lx7Pz4Rv8Nk3"
	wbBodySize = 2 << 10
	// wbRing is how many distinct signed deliveries the handler
	// benchmark cycles through; each handler sees each one once.
	wbRing = 1024
)

// wbEvent returns a payment.completed delivery of exactly 2 KiB, with
// the given event id.
func wbEvent(tb testing.TB, id string) []byte {
	tb.Helper()
	head := `{"id":"` + id + `","event":"payment.completed","created_at":"2025-03-01T10:01:00Z","data":{` +
		`"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"completed",` +
		`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","type":"transfer",` +
		`"sub_type":"domestic","category":"payout","transaction_date":"2025-03-01T10:00:00Z",` +
		`"tags":"invoice,march","is_reversed":false,"is_completed":true,"channel":"api",` +
		`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:01:00Z","notes":"`
	tail := `"}}`
	pad := wbBodySize - len(head) - len(tail)
	require.Positive(tb, pad)
	body := []byte(head + strings.Repeat("n", pad) + tail)
	require.Len(tb, body, wbBodySize)
	require.True(tb, json.Valid(body))
	return body
}

func wbEventID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// wbDelivery is one signed delivery.
type wbDelivery struct {
	body []byte
	sig  string
}

func wbDeliveries(tb testing.TB, n int) []wbDelivery {
	now := time.Now()
	ds := make([]wbDelivery, n)
	for i := range ds {
		body := wbEvent(tb, wbEventID(i))
		ds[i] = wbDelivery{body, webhook.SignPayload(body, now, wbSecret)}
	}
	return ds
}

// The baseline: what a merchant would write by hand.
type baselineEvent struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

var errBaselineSignature = errors.New("bad signature")

// baselineVerify checks "t=<unix>,v1=<hex>[,v1=...]" against
// HMAC-SHA256(secret, "<t>.<body>") and a 5-minute tolerance.
func baselineVerify(payload []byte, header, secret string, now time.Time) error {
	var (
		ts   string
		sigs [][]byte
	)
	for _, item := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if s, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, s)
			}
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errBaselineSignature
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(payload)
	want := m.Sum(nil)
	ok := false
	for _, s := range sigs {
		ok = hmac.Equal(want, s) || ok
	}
	if age := now.Sub(time.Unix(t, 0)); !ok || age > 5*time.Minute || age < -5*time.Minute {
		return errBaselineSignature
	}
	return nil
}

func baselineConstructEvent(payload []byte, header http.Header, secret string) (*baselineEvent, error) {
	if err := baselineVerify(payload, header.Get(webhook.SignatureHeader), secret, time.Now()); err != nil {
		return nil, err
	}
	ev := new(baselineEvent)
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, err
	}
	if ev.ID == "" || ev.Event == "" {
		return nil, errors.New("not an event")
	}
	return ev, nil
}

// baselineReceiver is a hand-written webhook handler: read, verify, parse,
// drop duplicates, process, answer.
type baselineReceiver struct {
	secret string
	fn     func(*baselineEvent) error
	mu     sync.Mutex
	seen   map[string]bool
}

func (h *baselineReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(status int) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, http.StatusText(status)+"\n")
	}
	if r.Method != http.MethodPost {
		reply(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		reply(http.StatusRequestEntityTooLarge)
		return
	}
	ev, err := baselineConstructEvent(body, r.Header, h.secret)
	if err != nil {
		reply(http.StatusUnauthorized)
		return
	}
	h.mu.Lock()
	dup := h.seen[ev.ID]
	h.seen[ev.ID] = true
	h.mu.Unlock()
	if dup {
		reply(http.StatusOK)
		return
	}
	if err := h.fn(ev); err != nil {
		h.mu.Lock()
		delete(h.seen, ev.ID)
		h.mu.Unlock()
		reply(http.StatusInternalServerError)
		return
	}
	reply(http.StatusOK)
}

// BenchmarkWebhookConstructEvent verifies and parses one 2 KiB delivery:
// ConstructEvent against HMAC and json.Unmarshal by hand.
func BenchmarkWebhookConstructEvent(b *testing.B) {
	d := wbDeliveries(b, 1)[0]
	header := http.Header{webhook.SignatureHeader: {d.sig}}
	b.Run("impl=sdk", func(b *testing.B) {
		b.SetBytes(int64(len(d.body)))
		benchLoop(b, func() error {
			_, err := webhook.ConstructEvent(d.body, header, wbSecret)
			return err
		})
	})
	b.Run("impl=baseline", func(b *testing.B) {
		b.SetBytes(int64(len(d.body)))
		benchLoop(b, func() error {
			_, err := baselineConstructEvent(d.body, header, wbSecret)
			return err
		})
	})
}

// BenchmarkWebhookConstructEventPayment is BenchmarkWebhookConstructEvent
// plus decoding the event's data into a payment, as a receiver does.
func BenchmarkWebhookConstructEventPayment(b *testing.B) {
	d := wbDeliveries(b, 1)[0]
	header := http.Header{webhook.SignatureHeader: {d.sig}}
	b.Run("impl=sdk", func(b *testing.B) {
		b.SetBytes(int64(len(d.body)))
		benchLoop(b, func() error {
			ev, err := webhook.ConstructEvent(d.body, header, wbSecret)
			if err != nil {
				return err
			}
			_, err = ev.Payment()
			return err
		})
	})
	b.Run("impl=baseline", func(b *testing.B) {
		b.SetBytes(int64(len(d.body)))
		benchLoop(b, func() error {
			ev, err := baselineConstructEvent(d.body, header, wbSecret)
			if err != nil {
				return err
			}
			return json.Unmarshal(ev.Data, new(benchbaseline.Payment))
		})
	})
}

// BenchmarkWebhookHandler delivers signed 2 KiB events, each new to the
// handler, through ServeHTTP with an httptest.ResponseRecorder: read,
// verify, parse, claim the event id, call the function (which decodes the
// payment), record it done, answer 200. Every wbRing deliveries a fresh
// handler (and claim store) takes over, so that no delivery is a duplicate.
func BenchmarkWebhookHandler(b *testing.B) {
	ring := wbDeliveries(b, wbRing)
	b.Run("impl=sdk", func(b *testing.B) {
		v, err := webhook.NewSignatureVerifier([]string{wbSecret})
		require.NoError(b, err)
		fn := func(_ context.Context, ev *payments.Event) error {
			_, err := ev.Payment()
			return err
		}
		runWebhookHandlerBench(b, ring, func() http.Handler { return webhook.NewHandler(v, fn) })
	})
	b.Run("impl=baseline", func(b *testing.B) {
		fn := func(ev *baselineEvent) error { return json.Unmarshal(ev.Data, new(benchbaseline.Payment)) }
		runWebhookHandlerBench(b, ring, func() http.Handler {
			return &baselineReceiver{secret: wbSecret, fn: fn, seen: make(map[string]bool)}
		})
	})
}

func runWebhookHandlerBench(b *testing.B, ring []wbDelivery, newHandler func() http.Handler) {
	var (
		h http.Handler
		i int
	)
	b.SetBytes(wbBodySize)
	benchLoop(b, func() error {
		if i%len(ring) == 0 {
			h = newHandler()
		}
		d := ring[i%len(ring)]
		i++
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(d.body))
		req.Header.Set(webhook.SignatureHeader, d.sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("status %d: %s", rec.Code, rec.Body)
		}
		return nil
	})
}

// TestWebhookBenchBaselineAgrees checks the webhook baselines against the
// SDK on the benchmarks' deliveries, and that a tampered one is refused by
// both. It measures nothing.
func TestWebhookBenchBaselineAgrees(t *testing.T) {
	d := wbDeliveries(t, 1)[0]
	header := http.Header{webhook.SignatureHeader: {d.sig}}
	ev, err := webhook.ConstructEvent(d.body, header, wbSecret)
	require.NoError(t, err)
	bev, err := baselineConstructEvent(d.body, header, wbSecret)
	require.NoError(t, err)
	require.Equal(t, ev.ID, bev.ID)
	require.Equal(t, string(ev.Type), bev.Event)
	require.JSONEq(t, string(ev.Data), string(bev.Data))

	tampered := bytes.Replace(d.body, []byte("15000.50"), []byte("15000.51"), 1)
	_, err = webhook.ConstructEvent(tampered, header, wbSecret)
	require.Error(t, err)
	_, err = baselineConstructEvent(tampered, header, wbSecret)
	require.Error(t, err)
}
