package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestDoctorKeepsItsEventsFromTheMerchant: the sandbox's webhook URL
// points at a merchant's receiver before doctor runs. doctor points it at
// its own receiver before it creates anything, and puts it back at the
// end: after a whole run, after Ctrl-C in the middle, and after --timeout
// in the middle. The merchant's receiver gets none of doctor's events.
func TestDoctorKeepsItsEventsFromTheMerchant(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		// stopAt: the request at which the run is interrupted ("": none),
		// and how: "cancel" (Ctrl-C) or "hang" (until --timeout).
		stopAt, how string
		code        int
		// late: the sandbox holds each delivery 2 s, past doctor's --wait.
		late bool
	}{
		{name: "whole run", code: exitOK},
		{name: "late deliveries", code: exitOK, late: true, args: []string{"--wait", "1s"}},
		{name: "Ctrl-C", stopAt: "/payments/initiate", how: "cancel", code: exitFailure},
		{name: "--timeout", stopAt: "/payments/confirm", how: "hang", args: []string{"--timeout", "6s"}, code: exitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var merchantGot atomic.Int32
			merchant := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { merchantGot.Add(1) }))
			t.Cleanup(merchant.Close)
			sb := paymentstest.Sandbox{}
			if tc.late {
				sb.DeliveryDelay = 2 * time.Second
			}
			f := startFake(t, paymentstest.WithSandbox(sb), paymentstest.WithWebhook(paymentstest.Webhook{URL: merchant.URL, Secrets: []string{sinkSecret}}))
			require.Equal(t, merchant.URL, f.webhookURL(t))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rec := newRecorder(t, f.URL(), func(w http.ResponseWriter, r *http.Request) bool {
				if tc.stopAt == "" || r.Method != http.MethodPost || r.URL.Path != tc.stopAt {
					return false
				}
				if tc.how == "cancel" {
					cancel() // the request still goes through, as one in flight at Ctrl-C
					return false
				}
				_, _ = io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
				return true
			})
			var out syncBuffer
			code, stderr := runDoctorVia(ctx, t, rec, f.with(envBaseURL, "http://127.0.0.1:1", envWebhookSecret, sinkSecret), &out, append([]string{"--json"}, tc.args...)...)
			assert.Equal(t, tc.code, code, stderr)

			redirect, create := rec.index("PUT /_sandbox/webhook-url"), rec.index("POST /payments/")
			require.GreaterOrEqual(t, redirect, 0, rec.seen())
			assert.Less(t, redirect, create, "the webhook URL is pointed at doctor before anything is created: %v", rec.seen())
			assert.Len(t, rec.matching("PUT /_sandbox/webhook-url"), 2, "pointed at doctor, then back")
			assert.Equal(t, merchant.URL, f.webhookURL(t), "the merchant's webhook URL is back")
			wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
			defer wcancel()
			require.NoError(t, f.WaitForDeliveries(wctx))
			assert.NotEmpty(t, f.Deliveries(), "doctor's events were delivered (to doctor)")
			assert.Zero(t, merchantGot.Load(), "none of doctor's events reached the merchant's receiver")
		})
	}
}

// TestDoctorPutsBackSeveralWebhookURLs: a sandbox delivering round robin
// to two replicas of the merchant's receiver gets both URLs back after
// doctor, and neither replica gets doctor's events.
func TestDoctorPutsBackSeveralWebhookURLs(t *testing.T) {
	var merchantGot atomic.Int32
	var urls []string
	for range 2 {
		replica := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { merchantGot.Add(1) }))
		t.Cleanup(replica.Close)
		urls = append(urls, replica.URL)
	}
	f := startFake(t, paymentstest.WithSandbox(paymentstest.Sandbox{}), paymentstest.WithWebhook(paymentstest.Webhook{URLs: urls, Secrets: []string{sinkSecret}}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := newRecorder(t, f.URL(), func(http.ResponseWriter, *http.Request) bool { return false })
	var out syncBuffer
	code, stderr := runDoctorVia(ctx, t, rec, f.with(envBaseURL, "http://127.0.0.1:1", envWebhookSecret, sinkSecret), &out, "--json")
	assert.Equal(t, exitOK, code, stderr)
	var setting struct {
		URLs []string `json:"urls"`
	}
	f.admin(t, http.MethodGet, "webhook-url", nil, &setting)
	assert.Equal(t, urls, setting.URLs, "both replicas are back")
	require.NoError(t, f.WaitForDeliveries(ctx))
	assert.Zero(t, merchantGot.Load(), "none of doctor's events reached the merchant's replicas")
}
