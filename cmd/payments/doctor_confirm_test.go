package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// TestDoctorConfirmsOnePayment: doctor confirms exactly one payment of the
// sandbox and follows it to its final status through its events. A status
// the SDK does not know in the confirm's answer differs; a pending one is
// followed to its payment.completed.
func TestDoctorConfirmsOnePayment(t *testing.T) {
	for _, tc := range []struct {
		status string // what the confirm's answer says instead of completed
		result result
		detail string
	}{
		{"completed", holds, "the confirmed payment answered completed, then payment.completed came for it (status completed)"},
		{"pending", holds, "the confirmed payment answered pending, then payment.completed came for it (status completed)"},
		{"processing", differs, "POST /payments/confirm: status processing is none of pending, completed, failed, rejected"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			f := startFake(t, adminAPI())
			rec := newRecorder(t, f.URL(), nil)
			rec.modify = func(resp *http.Response) error {
				if resp.Request.URL.Path != "/payments/confirm" {
					return nil
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					return err
				}
				b = bytes.ReplaceAll(b, []byte(`"status":"completed"`), []byte(`"status":"`+tc.status+`"`))
				resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
				resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
				return nil
			}
			var out syncBuffer
			code, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://127.0.0.1:1", envWebhookSecret, sinkSecret), &out, "--json")
			_, rows := doctorDoc(t, out.String())
			r := rows["Payment statuses"]
			assert.Equal(t, tc.result, r.Result, r.Detail)
			assert.Contains(t, r.Detail, tc.detail)
			if tc.result == differs {
				assert.Equal(t, exitFailure, code, stderr)
			} else {
				assert.Equal(t, exitOK, code, stderr)
			}
			assert.Len(t, rec.matching("POST /payments/confirm"), 1, "one confirm")
			ps := f.Payments()
			require.Len(t, ps, 1, "one payment")
			assert.Equal(t, payments.PaymentStatusCompleted, ps[0].Status)
		})
	}
}

// TestDoctorRateLimitWait: what a 429 carries, met in doctor's burst of
// GET requests: a wait the client reads (Retry-After; without it,
// RateLimit-Reset or RateLimit's t= in seconds) holds; one only in headers
// it does not read, or none, differs and names them.
func TestDoctorRateLimitWait(t *testing.T) {
	for _, tc := range []struct {
		header map[string]string
		result result
		detail string
	}{
		{map[string]string{"Retry-After": "1"}, holds, "a 429 (GET /webhooks/events) carries Retry-After: 1, which the client honours"},
		{map[string]string{"Retry-After": "Sun, 29 Nov 2026 04:00:00 GMT"}, holds, "carries Retry-After: Sun, 29 Nov 2026 04:00:00 GMT, which the client honours"},
		{map[string]string{"X-RateLimit-Reset": "1796000000", "X-RateLimit-Remaining": "0"}, differs,
			"a 429 (GET /webhooks/events) carries its wait in X-RateLimit-Reset: 1796000000, not in Retry-After: the client does not read X-RateLimit-Reset"},
		{map[string]string{"X-RateLimit-Retry-After": "5"}, differs, "carries its wait in X-RateLimit-Retry-After: 5, not in Retry-After: the client does not read X-RateLimit-Retry-After"},
		{map[string]string{"RateLimit": "limit=10, remaining=0, reset=5"}, differs, "carries its wait in RateLimit: limit=10, remaining=0, reset=5, not in Retry-After"},
		{map[string]string{"RateLimit-Reset": "1796000000"}, differs, "carries its wait in RateLimit-Reset: 1796000000, not in Retry-After: the client does not read RateLimit-Reset"},
		{map[string]string{"RateLimit-Reset": "5", "X-RateLimit-Retry-After": "5"}, holds,
			"carries no Retry-After, and its wait in RateLimit-Reset: 5, X-RateLimit-Retry-After: 5, which the client reads as it reads Retry-After"},
		{map[string]string{"RateLimit": `"default";r=0;t=30`}, holds, `its wait in RateLimit: "default";r=0;t=30, which the client reads`},
		{map[string]string{"Retry-After": "soon"}, differs, `carries Retry-After: "soon", neither seconds nor an HTTP date`},
		{nil, differs, "carries no wait (no Retry-After, RateLimit-Reset or X-RateLimit-Reset)"},
	} {
		t.Run(strings.Join(keys(tc.header), ","), func(t *testing.T) {
			f := startFake(t, adminAPI())
			var reads atomic.Int32
			rec := newRecorder(t, f.URL(), func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || r.URL.Path != "/webhooks/events" || r.URL.RawQuery != "limit=1" || reads.Add(1) <= 5 {
					return false
				}
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, `{"success":false,"message":"Too many requests","stan":"0b6c6a0e-1234-4000-8000-123456789012"}`)
				return true
			})
			var out syncBuffer
			_, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://127.0.0.1:1", envWebhookSecret, sinkSecret), &out, "--json")
			_, rows := doctorDoc(t, out.String())
			r := rows["Retryable answers"]
			assert.Equal(t, tc.result, r.Result, "%s %s", r.Detail, stderr)
			assert.Contains(t, r.Detail, tc.detail)
			assert.Equal(t, int32(6), reads.Load(), "the burst stops at the first 429")
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	if out == nil {
		out = []string{"none"}
	}
	return out
}
