package paymentstest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"

	payments "github.com/paymentsapi/payments-go"
)

type webhookURLData struct {
	URL *string `json:"url"`
}

func webhookURLOf(t *testing.T, res *rawResponse) string {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	d := data[webhookURLData](t, res)
	require.NotNil(t, d.URL, "data.url is always there: %s", res.env.Data)
	return *d.URL
}

// TestAdminWebhookURL: GET reads where deliveries go, PUT moves them (the
// secrets stay) or turns them off with "".
func TestAdminWebhookURL(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{secret}}), paymentstest.WithWebhookRetryWait(0))
	assert.Equal(t, "", webhookURLOf(t, send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)), "none yet")
	createRecipient(t, c, "")
	assert.Empty(t, srv.Deliveries(), "no URL, no delivery")

	target := rc.URL + "/webhooks"
	res := send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"url": "`+target+`"}`, nil)
	assert.Equal(t, target, webhookURLOf(t, res), "the answer is the new setting")
	assert.Equal(t, "Webhook URL set", res.env.Message)
	assert.Equal(t, target, webhookURLOf(t, send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)))
	assert.Equal(t, target, srv.WebhookURL())

	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 2)
	for _, d := range got {
		_, err := webhook.ConstructEvent(d.body, d.header, secret)
		require.NoError(t, err, "signed with the secret set before")
	}
	require.Len(t, srv.Deliveries(), 2)
	assert.Equal(t, target, srv.Deliveries()[0].URL)

	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"url": ""}`, nil)
	assert.Equal(t, "", webhookURLOf(t, res))
	assert.Equal(t, "Webhook deliveries turned off", res.env.Message)
	createRecipient(t, c, "")
	waitDeliveries(t, srv)
	assert.Len(t, rc.deliveries(), 2, "off: nothing more is sent")
	assert.Len(t, srv.Events(), 6, "events are still recorded")
}

func TestAdminWebhookURLRefusesBadInput(t *testing.T) {
	srv, _ := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/hooks", Secrets: []string{secret}}))
	for body, field := range map[string]string{
		`{}`:                             "url",
		`{"url": null}`:                  "url",
		`{"url": 5}`:                     "url",
		`{"url": "ftp://example.com/x"}`: "url",
		`{"url": "/webhooks"}`:           "url",
		`{"url": "localhost:8080"}`:      "url",
		`{"url": "http://"}`:             "url",
		`{"url": "http://` + strings.Repeat("a", 1100) + `"}`: "url",
		`{"url": "http://x/", "secret": "s"}`:                 "secret",
	} {
		res := send(t, srv, http.MethodPut, "/_sandbox/webhook-url", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", body, res.body)
		assert.Equal(t, string(payments.CodeValidationFailed), res.env.Code, body)
		assert.Contains(t, res.fields(), field, body)
	}
	res := send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"url": `, nil)
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, string(payments.CodeInvalidJSON), res.env.Code)

	res = send(t, srv, http.MethodPost, "/_sandbox/webhook-url", `{"url": "http://x/"}`, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Equal(t, "GET, PUT", res.header.Get("Allow"))

	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"url": "http://x/"}`, map[string]string{"Authorization": ""})
	assert.Equal(t, http.StatusUnauthorized, res.status)

	assert.Equal(t, "http://127.0.0.1:1/hooks", srv.WebhookURL(), "nothing refused changed the setting")
}

func TestSetWebhookURLKeepsSecrets(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/dead", Secrets: []string{"old", "new"}}), paymentstest.WithWebhookRetryWait(0))
	require.Error(t, srv.SetWebhookURL("mailto:ops@example.com"))
	assert.Equal(t, "http://127.0.0.1:1/dead", srv.WebhookURL(), "a refused URL changes nothing")
	require.NoError(t, srv.SetWebhookURL(rc.URL))
	assert.Equal(t, rc.URL, srv.WebhookURL())
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, 2, strings.Count(got[0].header.Get(webhook.SignatureHeader), "v1="), "both secrets still sign")
	for _, s := range []string{"old", "new"} {
		_, err = webhook.ConstructEvent(got[0].body, got[0].header, s)
		require.NoError(t, err, s)
	}
	require.NoError(t, srv.SetWebhookURL(""))
	assert.Equal(t, "", srv.WebhookURL())
}

// TestAdminWebhookURLs: PUT {"urls": [...]} sets several receivers, which
// deliveries go to round robin; GET reads them back ("url" is the first);
// a bad one, or "url" and "urls" together, changes nothing.
func TestAdminWebhookURLs(t *testing.T) {
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	srv, c := startAdmin(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/hooks", Secrets: []string{secret}}))
	type urlsData struct {
		URL  string   `json:"url"`
		URLs []string `json:"urls"`
	}
	for body, field := range map[string]string{
		`{"urls": ["http://x/", "mailto:ops@example.com"]}`: "urls",
		`{"urls": "http://x/"}`:                             "urls",
		`{"urls": ["http://x/", ""]}`:                       "urls",
		`{"url": "http://x/", "urls": ["http://y/"]}`:       "urls",
	} {
		res := send(t, srv, http.MethodPut, "/_sandbox/webhook-url", body, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", body, res.body)
		assert.Contains(t, res.fields(), field, body)
	}
	assert.Equal(t, "http://127.0.0.1:1/hooks", srv.WebhookURL(), "nothing refused changed the setting")

	res := send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"urls": ["`+a.URL+`", "`+b.URL+`"]}`, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	assert.Equal(t, "Webhook URLs set: deliveries go round robin", res.env.Message)
	assert.Equal(t, urlsData{URL: a.URL, URLs: []string{a.URL, b.URL}}, data[urlsData](t, send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)))
	createRecipient(t, c, "") // recipient.created and recipient.verified
	waitDeliveries(t, srv)
	assert.Len(t, a.deliveries(), 1)
	assert.Len(t, b.deliveries(), 1)

	res = send(t, srv, http.MethodPut, "/_sandbox/webhook-url", `{"urls": []}`, nil)
	assert.Equal(t, "Webhook deliveries turned off", res.env.Message)
	assert.Equal(t, urlsData{URLs: []string{}}, data[urlsData](t, res))
}
