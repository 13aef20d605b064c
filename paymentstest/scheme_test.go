package paymentstest_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestStandardSchemeRotation: with two secrets, webhook-signature has one
// v1 entry per secret, and a receiver knowing either one accepts.
func TestStandardSchemeRotation(t *testing.T) {
	old, next := newStandardSecret(t), newStandardSecret(t)
	raw := newReceiver(t, nil)
	srv, c := standardServer(t, raw.URL, old, next)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	got := raw.deliveries()
	require.Len(t, got, 1)
	sig := got[0].header.Get(webhook.StandardSignatureHeader)
	entries := strings.Fields(sig)
	require.Len(t, entries, 2, "one entry per secret: %q", sig)
	for _, e := range entries {
		assert.True(t, strings.HasPrefix(e, "v1,"), e)
	}
	for _, s := range []string{old, next} {
		v, err := webhook.NewStandardVerifier([]string{s})
		require.NoError(t, err)
		assert.NoError(t, v.Verify(got[0].body, got[0].header))
	}
	v, err := webhook.NewStandardVerifier([]string{newStandardSecret(t)})
	require.NoError(t, err)
	assert.ErrorIs(t, v.Verify(got[0].body, got[0].header), webhook.ErrNoMatchingSignature)
}

// TestStandardSchemeSecrets: the server makes a whsec_ secret when given
// none; a secret the scheme cannot use is refused without being repeated,
// and a refused change changes nothing.
func TestStandardSchemeSecrets(t *testing.T) {
	a := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{Scheme: paymentstest.SchemeStandard}))
	defer a.Close()
	b := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{Scheme: paymentstest.SchemeStandard}), paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/x"}))
	defer b.Close()
	made := append(a.WebhookSecrets(), b.WebhookSecrets()...)
	require.Len(t, made, 2)
	assert.NotEqual(t, made[0], made[1], "a new secret per server")
	for _, s := range made {
		assert.True(t, strings.HasPrefix(s, "whsec_"), "a whsec_ secret")
		_, err := webhook.NewStandardVerifier([]string{s})
		assert.NoError(t, err)
	}

	def := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{"plain"}}))
	defer def.Close()
	assert.Equal(t, paymentstest.SchemePayments, def.WebhookScheme(), "the default scheme")
	assert.Equal(t, []string{"plain"}, def.WebhookSecrets(), "any secret signs Payments-Signature")

	for name, bad := range map[string]string{
		"not base64":        "whsec_not base64!",
		"no whsec_ prefix":  "c2VjcmV0LWJ5dGVz",
		"an ed25519 key":    "whsk_c2VjcmV0LWJ5dGVz",
		"empty after whsec": "whsec_",
	} {
		_, err := paymentstest.StartServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{made[0], bad}}),
			paymentstest.WithWebhook(paymentstest.Webhook{Scheme: paymentstest.SchemeStandard}))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "webhook secret 1 is not a Standard Webhooks secret", name)
		if bad != "whsec_" {
			assert.NotContains(t, err.Error(), bad, "the secret is never repeated")
		}
		assert.NotContains(t, err.Error(), made[0], "the secret is never repeated")

		require.Error(t, a.SetWebhook("http://127.0.0.1:2/y", bad), name)
		require.Error(t, a.SetWebhookScheme(paymentstest.SchemeStandard, bad), name)
		assert.Equal(t, made[:1], a.WebhookSecrets(), "a refused change changes nothing")
		assert.Equal(t, "", a.WebhookURL(), "a refused change changes nothing")
	}
	_, err := paymentstest.StartServer(paymentstest.WithWebhook(paymentstest.Webhook{Scheme: "hmac"}))
	require.ErrorContains(t, err, `WithWebhook: Scheme "hmac"`)
	require.ErrorContains(t, a.SetWebhookScheme("hmac"), `SetWebhookScheme("hmac")`)
	assert.Equal(t, paymentstest.SchemeStandard, a.WebhookScheme())

	require.NoError(t, a.SetWebhook("http://127.0.0.1:2/y"))
	fresh := a.WebhookSecrets()
	require.Len(t, fresh, 1)
	assert.NotEqual(t, made[0], fresh[0], "SetWebhook without secrets makes a new one under the standard scheme")
}

// TestSetWebhookSchemeAtRunTime: the scheme changes for every attempt from
// then on, the retry of an event whose first attempt was signed the other
// way included.
func TestSetWebhookSchemeAtRunTime(t *testing.T) {
	const old = "payments-secret"
	arrived, switched := make(chan struct{}), make(chan struct{})
	var once sync.Once
	raw := newReceiver(t, func(n int) int {
		if n == 1 {
			once.Do(func() { close(arrived) })
			<-switched
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: raw.URL, Secrets: []string{old}}), paymentstest.WithWebhookRetryWait(time.Millisecond))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	<-arrived
	s := newStandardSecret(t)
	require.NoError(t, srv.SetWebhookScheme(paymentstest.SchemeStandard, s))
	close(switched)
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	waitDeliveries(t, srv)

	got := raw.deliveries()
	require.Len(t, got, 3)
	_, err = webhook.ConstructEvent(got[0].body, got[0].header, old)
	require.NoError(t, err, "the first attempt: Payments-Signature")
	assert.Empty(t, got[0].header.Get(webhook.StandardIDHeader))
	v, err := webhook.NewStandardVerifier([]string{s})
	require.NoError(t, err)
	for _, d := range got[1:] {
		require.NoError(t, v.Verify(d.body, d.header), "after the switch: Standard Webhooks")
		assert.Empty(t, d.header.Get(webhook.SignatureHeader))
	}
	log := srv.Deliveries()
	require.Len(t, log[0].Attempts, 2)
	assert.Equal(t, paymentstest.SchemePayments, log[0].Attempts[0].Scheme)
	assert.Equal(t, paymentstest.SchemeStandard, log[0].Attempts[1].Scheme)
	// The retry waits on its own schedule: the triggered event may go
	// first. Either way the retry carries the event's id.
	ids := []string{got[1].header.Get(webhook.StandardIDHeader), got[2].header.Get(webhook.StandardIDHeader)}
	assert.Contains(t, ids, log[0].EventID)

	// Back to the payments scheme without a secret: unsigned, and refused.
	require.NoError(t, srv.SetWebhookScheme(paymentstest.SchemePayments))
	assert.Empty(t, srv.WebhookSecrets())
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	waitDeliveries(t, srv)
	last := raw.deliveries()[3]
	_, err = webhook.ConstructEvent(last.body, last.header, old)
	require.ErrorIs(t, err, webhook.ErrMalformedSignatureHeader, "t=... only: no v1 signature")
	assert.Regexp(t, `^t=\d+$`, last.header.Get(webhook.SignatureHeader))
}

// TestAdminReportsTheScheme: the admin API says how deliveries are signed,
// attempt by attempt, and never shows a secret.
func TestAdminReportsTheScheme(t *testing.T) {
	s := newStandardSecret(t)
	raw := newReceiver(t, nil)
	srv, c := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{Scheme: paymentstest.SchemeStandard}),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: raw.URL, Secrets: []string{s}}), paymentstest.WithWebhookRetryWait(time.Millisecond))
	type setting struct{ URL, Scheme string }
	res := send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, setting{raw.URL, "standard"}, data[setting](t, res))
	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"url": "`+raw.URL+`/hooks"}`, nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, setting{raw.URL + "/hooks", "standard"}, data[setting](t, res), "moving the URL keeps the scheme")
	assert.Equal(t, []string{s}, srv.WebhookSecrets(), "and the secrets")

	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	res = send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	d := data[deliveriesData](t, res)
	require.Len(t, d.Deliveries, 1)
	require.Len(t, d.Deliveries[0].Attempts, 1)
	a := d.Deliveries[0].Attempts[0]
	assert.Equal(t, "standard", a.Scheme)
	assert.Equal(t, raw.deliveries()[0].header.Get(webhook.StandardSignatureHeader), a.Signature)

	require.NoError(t, srv.SetWebhookScheme(paymentstest.SchemePayments, "p"))
	res = send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)
	assert.Equal(t, setting{raw.URL + "/hooks", "payments"}, data[setting](t, res))
	for _, path := range []string{"/_sandbox/webhook-url", "/_sandbox/deliveries"} {
		body := send(t, srv, http.MethodGet, path, "", nil).body
		assert.NotContains(t, string(body), strings.TrimPrefix(s, "whsec_"), "%s shows no secret", path)
	}
}
