package main

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// productionLooking are hosts that a guess from the name took for a
// sandbox ("test", "sandbox", "dev", "staging" inside a word or a label).
var productionLooking = []string{
	"fastestpay.com", "latest-bank.com", "contestpay.io", "sandboxed-bank.com", "devcorp.net", "stagingpay.com",
	"api.testbank.example", "api.sandbox.provider.example", "test.provider.example", "staging-api.bank.example",
}

// TestDoctorWritesOnlyToANamedSandbox: doctor sends no write (POST, PUT,
// DELETE, admin call) to a host the merchant did not name as a sandbox,
// whatever its name says, counted at a server that records every request;
// --production sends GET requests to any host, loopback included; a
// contradictory or mismatched flag is a usage error with nothing sent. The
// same host named with --sandbox-host gets the writes.
func TestDoctorWritesOnlyToANamedSandbox(t *testing.T) {
	f := startFake(t, adminAPI())
	for _, host := range append(productionLooking, "localhost") {
		t.Run(host, func(t *testing.T) {
			env := f.with(envBaseURL, "http://"+host, envInsecureHTTP, "1")
			if host != "localhost" {
				rec := newRecorder(t, f.URL(), nil)
				var out syncBuffer
				code, stderr := runDoctorVia(minute(t), t, rec, env, &out)
				assert.Equal(t, exitUsage, code)
				assert.Equal(t, "payments: doctor creates a recipient and confirms a payment, and sends such writes only to a sandbox you name: "+host+" is not loopback. "+
					"If it is your provider's sandbox, pass --sandbox-host "+host+"; to check production with GET requests only, pass --production. Nothing was sent\n", stderr)
				assert.Empty(t, rec.seen(), "nothing is sent")
			}

			rec := newRecorder(t, f.URL(), nil)
			var out syncBuffer
			code, stderr := runDoctorVia(minute(t), t, rec, env, &out, "--production", "--json")
			assert.Equal(t, exitOK, code, stderr)
			assert.NotEmpty(t, rec.seen(), "the GET requests reach the recorder")
			assert.Empty(t, rec.writes(), "--production: GET requests only")

			for _, args := range [][]string{
				{"--sandbox-host", "other.example"},
				{"--sandbox-host", "pay.com"},
				{"--production", "--sandbox-host", host},
				{"--production", "--receive", "127.0.0.1:0"},
				{"--production", "--wait", "5s"},
				{"--production", "--currency", "USD"},
			} {
				rec := newRecorder(t, f.URL(), nil)
				code, stderr := runDoctorVia(minute(t), t, rec, env, &out, args...)
				assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
				assert.Empty(t, rec.seen(), "%v: nothing is sent", args)
			}
		})
	}

	// The control: named with --sandbox-host, the same host gets the writes.
	rec := newRecorder(t, f.URL(), nil)
	var out syncBuffer
	code, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://fastestpay.com", envInsecureHTTP, "1", envWebhookSecret, sinkSecret), &out,
		"--sandbox-host", "FastestPay.com", "--json")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, rec.writes(), "POST /payments/recipients")
	assert.Contains(t, rec.writes(), "POST /payments/confirm")
	assert.Contains(t, rec.writes(), "PUT /_sandbox/webhook-url")
}

// TestDoctorFlagMessages: each refusal says what to do.
func TestDoctorFlagMessages(t *testing.T) {
	f := startFake(t, adminAPI())
	env := f.with(envBaseURL, "http://fastestpay.com", envInsecureHTTP, "1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox-host", "sandbox.fastestpay.com"}, "payments: --sandbox-host sandbox.fastestpay.com does not name the host of PAYMENTS_BASE_URL (fastestpay.com): " +
			"doctor writes only to the host you name. If fastestpay.com is your sandbox, give --sandbox-host fastestpay.com; otherwise point PAYMENTS_BASE_URL at the sandbox. Nothing was sent\n"},
		{[]string{"--production", "--sandbox-host", "fastestpay.com"}, "payments: --production and --sandbox-host contradict each other: --production sends GET requests only, " +
			"--sandbox-host lets doctor create and confirm a payment at that host. Give --sandbox-host HOST for a sandbox, or --production alone\n"},
		{[]string{"--production", "--receive", "127.0.0.1:9090"}, "payments: --receive has no use with --production, which sends GET requests only (nothing is created, " +
			"triggered or delivered): drop --receive, or check a sandbox with --sandbox-host HOST instead\n"},
		{[]string{"--sandbox-host", "fastestpay.com", "--wait", "3m"}, "payments: --wait 3m0s is not shorter than --timeout 2m0s: doctor would stop before the wait ends; raise --timeout or shorten --wait\n"},
		{[]string{"--timeout", "0s"}, "payments: --timeout 0s: give a positive duration such as 2m\n"},
		{[]string{"--sandbox-host", " "}, "payments: --sandbox-host is empty: give the host of PAYMENTS_BASE_URL, such as sandbox.provider.example\n"},
	} {
		rec := newRecorder(t, f.URL(), nil)
		var out syncBuffer
		code, stderr := runDoctorVia(minute(t), t, rec, env, &out, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Equal(t, tc.want, stderr, tc.args)
		assert.Empty(t, rec.seen(), tc.args)
	}
}

// TestDoctorSandboxHostWithLiveKey: a sandbox flag, or loopback, with a key
// that looks live is refused (exit 2, nothing sent): doctor never confirms
// a payment with a production key; --production still reads.
func TestDoctorSandboxHostWithLiveKey(t *testing.T) {
	jwt := func(claims string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
	}
	f := startFake(t, adminAPI())
	for _, tc := range []struct{ key, why string }{
		{"sk_live_abc", "it starts with sk_live_"},
		{"live_abc", "it starts with live_"},
		{"PROD_abc", "it starts with prod_"},
		{jwt(`{"env":"production"}`), "its env claim is production"},
		{jwt(`{"mode":"live"}`), "its mode claim is live"},
		{jwt(`{"livemode":true}`), "its livemode claim is true"},
	} {
		for _, base := range []struct {
			url  string
			args []string
		}{
			{"http://fastestpay.com", []string{"--sandbox-host", "fastestpay.com"}},
			{"http://127.0.0.1:8765", nil},
		} {
			env := f.with(envAPIKey, tc.key, envBaseURL, base.url, envInsecureHTTP, "1")
			rec := newRecorder(t, f.URL(), nil)
			var out syncBuffer
			code, stderr := runDoctorVia(minute(t), t, rec, env, &out, base.args...)
			assert.Equal(t, exitUsage, code, tc.key)
			assert.Equal(t, "payments: the API key looks like a production key ("+tc.why+"): doctor creates and confirms a payment, so it sends no write with it. "+
				"Use the sandbox's API key, or pass --production to send GET requests only. Nothing was sent\n", stderr)
			assert.Empty(t, rec.seen(), tc.key)
		}
	}
	// A sandbox's own key is not refused for its shape.
	for _, key := range []string{"sk_test_abc", jwt(`{"env":"sandbox"}`), "k"} {
		assert.Empty(t, liveKeySign(key), key)
	}
	require.NotEmpty(t, liveKeySign("sk_live_abc"))
}
