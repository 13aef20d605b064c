package payments_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// TestRateLimitHeaderIsASurprise: a 429 that says how long to wait in
// another header than Retry-After is a surprise naming the header, logged
// once; the IETF draft's RateLimit-Reset and RateLimit t= (seconds) are
// honoured as Retry-After is (the Client's pause, capped at its maximum
// wait), the X- headers are not read. A Retry-After beside them is the
// assumption: no surprise, and it wins.
func TestRateLimitHeaderIsASurprise(t *testing.T) {
	const tooMany = `{"success":false,"message":"Too many requests","stan":"s"}`
	for _, tc := range []struct {
		name   string
		header http.Header
		detail string        // "": no surprise
		pause  time.Duration // the wait the next call makes; 0: none
	}{
		{"RateLimit-Reset", http.Header{"Ratelimit-Reset": {"7"}},
			"a 429's wait in RateLimit-Reset, no Retry-After (read as seconds)", 7 * time.Second},
		{"RateLimit t=", http.Header{"Ratelimit": {`"default";r=0;t=9`}, "Ratelimit-Policy": {`"default";q=100;w=60`}},
			"a 429's wait in RateLimit, no Retry-After (read as seconds)", 9 * time.Second},
		{"RateLimit-Reset capped", http.Header{"Ratelimit-Reset": {"3600"}},
			"a 429's wait in RateLimit-Reset, no Retry-After (read as seconds)", time.Minute},
		{"RateLimit-Reset as a Unix time", http.Header{"Ratelimit-Reset": {"1795000000"}},
			"a 429's wait in RateLimit-Reset, no Retry-After (not read)", 0},
		{"X-RateLimit-Reset", http.Header{"X-Ratelimit-Reset": {"1795000000"}, "X-Ratelimit-Remaining": {"0"}},
			"a 429's wait in X-RateLimit-Reset, no Retry-After (not read)", 0},
		{"X-RateLimit-Retry-After", http.Header{"X-Ratelimit-Retry-After": {"12"}},
			"a 429's wait in X-RateLimit-Retry-After, no Retry-After (not read)", 0},
		{"Retry-After beside them", http.Header{"Retry-After": {"4"}, "Ratelimit-Reset": {"7"}, "X-Ratelimit-Reset": {"9"}},
			"", 4 * time.Second},
		{"no wait at all", http.Header{}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counter surpriseCounter
			h, sink := loggedHarness(t, slog.LevelWarn, payments.WithObserver(counter.observe),
				payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: time.Minute}))
			ft := newFakeTime(h.client, true)
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(http.StatusTooManyRequests, tooMany).HeaderAdd(tc.header).
				Then(jsonResponder(http.StatusTooManyRequests, tooMany).HeaderAdd(tc.header)).
				Then(jsonResponder(http.StatusCreated, okEnvelope(recipientJSON))))
			once := payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1})
			for range 2 {
				_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), once)
				var apiErr *payments.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
			}
			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			require.NoError(t, err)
			var want []time.Duration
			if tc.pause > 0 {
				want = []time.Duration{tc.pause, tc.pause}
			}
			assert.Equal(t, want, ft.recorded(), "each call after a 429 waited out the pause it set")
			assert.Len(t, h.requests(), 3)

			lines := surpriseLines(t, sink)
			if tc.detail == "" {
				assert.Empty(t, counter.all())
				assert.Empty(t, lines)
				return
			}
			s := payments.Surprise{Kind: payments.SurpriseRateLimitHeader, Detail: tc.detail}
			assert.Equal(t, map[payments.Surprise]int{s: 2}, counter.all(), "each call with such a 429 reports it")
			require.Len(t, lines, 1, "logged once")
			assert.Equal(t, "rate_limit_header", lines[0]["kind"])
			assert.Equal(t, tc.detail, lines[0]["detail"])
			assert.Equal(t, "recipients.create", lines[0]["operation"])
		})
	}
}

// TestRateLimitHeaderOfARetriedCall: a 429 with its wait in another header,
// retried to a success, is reported by the call that succeeded.
func TestRateLimitHeaderOfARetriedCall(t *testing.T) {
	var counter surpriseCounter
	h := newHarness(t, payments.WithObserver(counter.observe), payments.WithLogger(slog.New(slog.DiscardHandler)))
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(http.StatusTooManyRequests, `{"success":false,"message":"slow down"}`).
		HeaderAdd(http.Header{"X-Ratelimit-Retry-After": {"1"}}).
		Then(jsonResponder(http.StatusCreated, okEnvelope(recipientJSON))))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, 2, r.LastResponse().Attempts)
	assert.Equal(t, map[payments.Surprise]int{
		{Kind: payments.SurpriseRateLimitHeader, Detail: "a 429's wait in X-RateLimit-Retry-After, no Retry-After (not read)"}: 1,
	}, counter.all())
}
