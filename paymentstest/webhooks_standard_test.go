package paymentstest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// newStandardSecret returns a fresh whsec_ secret.
func newStandardSecret(t *testing.T) string {
	t.Helper()
	s, err := payments.NewStandardSecret()
	require.NoError(t, err)
	return s
}

// handled is one answer of the SDK's handler: the webhook-id the fake sent
// and what the handler did with the delivery.
type handled struct {
	webhookID string
	outcome   payments.DeliveryOutcome
}

// standardReceiver is the SDK's webhook handler with a StandardVerifier, as
// a merchant runs it, behind a middleware that records each request as the
// fake sent it and may tamper with it or lose the handler's answer.
type standardReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []delivery        // as sent, before any tampering
	attempts map[string]int    // per webhook-id
	answers  []handled         // in the order the handler answered
	events   []*payments.Event // what the EventFunc was called with
	calls    map[string]int    // EventFunc calls per event id
}

// middleware may change r (its body, its headers) before the handler sees
// it; attempt counts the requests with r's webhook-id, from 1. It returns
// true to lose the answer: the handler processes the request, and the fake
// gets 503 instead of the handler's answer, as when a connection drops.
type middleware func(attempt int, r *http.Request) (loseAnswer bool)

func newStandardReceiver(t *testing.T, secrets []string, mw middleware) *standardReceiver {
	t.Helper()
	v, err := payments.NewStandardVerifier(secrets)
	require.NoError(t, err)
	rc := &standardReceiver{attempts: map[string]int{}, calls: map[string]int{}}
	h := payments.NewWebhookHandler(v, func(_ context.Context, ev *payments.Event) error {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.events = append(rc.events, ev)
		rc.calls[ev.ID]++
		return nil
	}, payments.WithDeliveryObserver(func(ctx context.Context, r *http.Request) (context.Context, func(payments.DeliveryResult)) {
		id := r.Header.Get("X-Sent-Webhook-Id")
		return ctx, func(res payments.DeliveryResult) {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			rc.answers = append(rc.answers, handled{id, res.Outcome})
		}
	}))
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		id := r.Header.Get(payments.StandardIDHeader)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{body: body, header: r.Header.Clone()})
		rc.attempts[id]++
		n := rc.attempts[id]
		rc.mu.Unlock()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("X-Sent-Webhook-Id", id)
		if mw == nil || !mw(n, r) {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *standardReceiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func (rc *standardReceiver) handled() []handled {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]handled(nil), rc.answers...)
}

func (rc *standardReceiver) processed() ([]*payments.Event, map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	calls := map[string]int{}
	for k, v := range rc.calls {
		calls[k] = v
	}
	return append([]*payments.Event(nil), rc.events...), calls
}

// standardServer starts a fake that signs with the standard scheme and
// retries at once.
func standardServer(t *testing.T, url string, secrets ...string) (*paymentstest.Server, *payments.Client) {
	t.Helper()
	return start(t, paymentstest.WithWebhookScheme(paymentstest.SchemeStandard),
		paymentstest.WithWebhook(url, secrets...), paymentstest.WithWebhookRetryWait(time.Millisecond))
}

// makeEvents makes three events: recipient.created, recipient.verified and
// a triggered payment.completed.
func makeEvents(t *testing.T, c *payments.Client) {
	t.Helper()
	createRecipient(t, c, "")
	_, err := c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
}

// TestStandardSchemeDeliveries: every delivery carries webhook-id (the
// event's id), webhook-timestamp (the wall clock at sending, however far
// Advance moved the fake) and webhook-signature, and no Payments-Signature;
// the SDK's handler with a StandardVerifier accepts each one at the first
// attempt and gets the events in order.
func TestStandardSchemeDeliveries(t *testing.T) {
	s := newStandardSecret(t)
	rc := newStandardReceiver(t, []string{s}, nil)
	srv, c := standardServer(t, rc.URL, s)
	assert.Equal(t, paymentstest.SchemeStandard, srv.WebhookScheme())
	assert.Equal(t, []string{s}, srv.WebhookSecrets())

	before := time.Now()
	r := createRecipient(t, c, "")
	p := initiate(t, c, r.ID, "300", "order-sw")
	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	srv.Advance(time.Hour) // business time only: signatures stay on the wall clock
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	waitDeliveries(t, srv)
	after := time.Now()

	log := srv.Deliveries()
	got := rc.deliveries()
	require.Len(t, log, 5)
	require.Len(t, got, 5, "one request per event: each accepted the first time")
	for i, d := range got {
		ev, err := payments.ParseEvent(d.body)
		require.NoError(t, err)
		assert.Equal(t, ev.ID, d.header.Get(payments.StandardIDHeader), "webhook-id is the event's id")
		assert.Equal(t, log[i].EventID, ev.ID)
		assert.Empty(t, d.header.Get(payments.SignatureHeader), "no Payments-Signature under the standard scheme")
		ts, err := strconv.ParseInt(d.header.Get(payments.StandardTimestampHeader), 10, 64)
		require.NoError(t, err)
		assert.True(t, ts >= before.Unix()-1 && ts <= after.Unix()+1, "webhook-timestamp %d is the wall clock at sending", ts)
		assert.Equal(t, "application/json", d.header.Get("Content-Type"))

		require.Len(t, log[i].Attempts, 1)
		a := log[i].Attempts[0]
		assert.Equal(t, http.StatusOK, a.StatusCode)
		assert.Equal(t, paymentstest.SchemeStandard, a.Scheme)
		assert.Equal(t, d.header.Get(payments.StandardSignatureHeader), a.Signature, "the log keeps the webhook-signature sent")
		assert.Equal(t, paymentstest.DeliveryDelivered, log[i].Status)
	}
	events, calls := rc.processed()
	want := []payments.EventType{payments.EventRecipientCreated, payments.EventRecipientVerified,
		payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentCompleted}
	require.Len(t, events, len(want))
	for i, ev := range events {
		assert.Equal(t, want[i], ev.Type)
		assert.Equal(t, 1, calls[ev.ID])
	}
	for _, h := range rc.handled() {
		assert.Equal(t, payments.OutcomeProcessed, h.outcome)
	}
}

// TestStandardSchemeRetriesAreDeduplicated: the handler processes each
// event, but its answer is lost; the fake retries with the same webhook-id
// and the handler answers 200 without running the function again.
func TestStandardSchemeRetriesAreDeduplicated(t *testing.T) {
	s := newStandardSecret(t)
	rc := newStandardReceiver(t, []string{s}, func(attempt int, _ *http.Request) bool { return attempt == 1 })
	srv, c := standardServer(t, rc.URL, s)
	makeEvents(t, c)
	waitDeliveries(t, srv)

	log := srv.Deliveries()
	require.Len(t, log, 3)
	byID := map[string][]delivery{}
	for _, d := range rc.deliveries() {
		id := d.header.Get(payments.StandardIDHeader)
		byID[id] = append(byID[id], d)
	}
	_, calls := rc.processed()
	for _, dl := range log {
		assert.Equal(t, paymentstest.DeliveryDelivered, dl.Status)
		require.Len(t, dl.Attempts, 2, "the lost answer was retried")
		assert.Equal(t, http.StatusServiceUnavailable, dl.Attempts[0].StatusCode)
		assert.Equal(t, http.StatusOK, dl.Attempts[1].StatusCode)
		sent := byID[dl.EventID]
		require.Len(t, sent, 2, "both attempts carry webhook-id %s", dl.EventID)
		assert.Equal(t, sent[0].body, sent[1].body)
		assert.Equal(t, 1, calls[dl.EventID], "processed once")
	}
	var outcomes []payments.DeliveryOutcome
	for _, h := range rc.handled() {
		outcomes = append(outcomes, h.outcome)
	}
	assert.Equal(t, []payments.DeliveryOutcome{
		payments.OutcomeProcessed, payments.OutcomeDuplicate,
		payments.OutcomeProcessed, payments.OutcomeDuplicate,
		payments.OutcomeProcessed, payments.OutcomeDuplicate,
	}, outcomes)
}

// TestStandardSchemeTamperingIsRefused: a first attempt changed on the way
// is refused with 401 and never processed; the fake's untouched retry is
// processed, once.
func TestStandardSchemeTamperingIsRefused(t *testing.T) {
	other := newStandardSecret(t)
	for name, tamper := range map[string]func(r *http.Request){
		"body": func(r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			b = bytes.Replace(b, []byte(`"event":"`), []byte(`"event": "`), 1)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		},
		"webhook-id": func(r *http.Request) {
			r.Header.Set(payments.StandardIDHeader, "00000000-0000-4000-8000-000000000001")
		},
		"webhook-timestamp": func(r *http.Request) {
			ts, _ := strconv.ParseInt(r.Header.Get(payments.StandardTimestampHeader), 10, 64)
			r.Header.Set(payments.StandardTimestampHeader, strconv.FormatInt(ts+1, 10))
		},
		"signed with another secret": func(r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			ts, _ := strconv.ParseInt(r.Header.Get(payments.StandardTimestampHeader), 10, 64)
			h, _ := payments.SignStandard(r.Header.Get(payments.StandardIDHeader), time.Unix(ts, 0), b, other)
			r.Header.Set(payments.StandardSignatureHeader, h.Get(payments.StandardSignatureHeader))
		},
		"no webhook-signature": func(r *http.Request) { r.Header.Del(payments.StandardSignatureHeader) },
		"a Payments-Signature instead": func(r *http.Request) {
			r.Header.Del(payments.StandardSignatureHeader)
			r.Header.Set(payments.SignatureHeader, payments.SignPayload([]byte("{}"), time.Now(), "whsec_x"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStandardSecret(t)
			rc := newStandardReceiver(t, []string{s}, func(attempt int, r *http.Request) bool {
				if attempt == 1 {
					tamper(r)
				}
				return false
			})
			srv, c := standardServer(t, rc.URL, s)
			makeEvents(t, c)
			waitDeliveries(t, srv)

			_, calls := rc.processed()
			for _, dl := range srv.Deliveries() {
				require.Len(t, dl.Attempts, 2, dl.Event)
				assert.Equal(t, http.StatusUnauthorized, dl.Attempts[0].StatusCode, "the tampered attempt is refused")
				assert.Equal(t, http.StatusOK, dl.Attempts[1].StatusCode, "the intact retry is accepted")
				assert.Equal(t, 1, calls[dl.EventID])
			}
			var refused int
			for _, h := range rc.handled() {
				if h.outcome == payments.OutcomeRejectedSignature {
					refused++
				}
			}
			assert.Equal(t, 3, refused)
		})
	}
}

// TestStandardSchemeWrongSecret: a receiver with another secret refuses
// every attempt; the delivery fails after all its retries, never processed.
func TestStandardSchemeWrongSecret(t *testing.T) {
	rc := newStandardReceiver(t, []string{newStandardSecret(t)}, nil)
	srv, c := standardServer(t, rc.URL, newStandardSecret(t))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	dl := srv.Deliveries()[0]
	assert.Equal(t, paymentstest.DeliveryFailed, dl.Status)
	require.Len(t, dl.Attempts, 1+paymentstest.WebhookRetries)
	for _, a := range dl.Attempts {
		assert.Equal(t, http.StatusUnauthorized, a.StatusCode)
	}
	events, _ := rc.processed()
	assert.Empty(t, events)
}

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
	sig := got[0].header.Get(payments.StandardSignatureHeader)
	entries := strings.Fields(sig)
	require.Len(t, entries, 2, "one entry per secret: %q", sig)
	for _, e := range entries {
		assert.True(t, strings.HasPrefix(e, "v1,"), e)
	}
	for _, s := range []string{old, next} {
		v, err := payments.NewStandardVerifier([]string{s})
		require.NoError(t, err)
		assert.NoError(t, v.Verify(got[0].body, got[0].header))
	}
	v, err := payments.NewStandardVerifier([]string{newStandardSecret(t)})
	require.NoError(t, err)
	assert.ErrorIs(t, v.Verify(got[0].body, got[0].header), payments.ErrNoMatchingSignature)
}

// TestStandardSchemeSecrets: the server makes a whsec_ secret when given
// none; a secret the scheme cannot use is refused without being repeated,
// and a refused change changes nothing.
func TestStandardSchemeSecrets(t *testing.T) {
	a := paymentstest.NewServer(paymentstest.WithWebhookScheme(paymentstest.SchemeStandard))
	defer a.Close()
	b := paymentstest.NewServer(paymentstest.WithWebhookScheme(paymentstest.SchemeStandard), paymentstest.WithWebhook("http://127.0.0.1:1/x"))
	defer b.Close()
	made := append(a.WebhookSecrets(), b.WebhookSecrets()...)
	require.Len(t, made, 2)
	assert.NotEqual(t, made[0], made[1], "a new secret per server")
	for _, s := range made {
		assert.True(t, strings.HasPrefix(s, "whsec_"), "a whsec_ secret")
		_, err := payments.NewStandardVerifier([]string{s})
		assert.NoError(t, err)
	}

	def := paymentstest.NewServer(paymentstest.WithWebhook("", "plain"))
	defer def.Close()
	assert.Equal(t, paymentstest.SchemePayments, def.WebhookScheme(), "the default scheme")
	assert.Equal(t, []string{"plain"}, def.WebhookSecrets(), "any secret signs Payments-Signature")

	for name, bad := range map[string]string{
		"not base64":        "whsec_not base64!",
		"no whsec_ prefix":  "c2VjcmV0LWJ5dGVz",
		"an ed25519 key":    "whsk_c2VjcmV0LWJ5dGVz",
		"empty after whsec": "whsec_",
	} {
		_, err := paymentstest.StartServer(paymentstest.WithWebhook("", made[0], bad),
			paymentstest.WithWebhookScheme(paymentstest.SchemeStandard))
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
	_, err := paymentstest.StartServer(paymentstest.WithWebhookScheme("hmac"))
	require.ErrorContains(t, err, `WithWebhookScheme("hmac")`)
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
	srv, c := start(t, paymentstest.WithWebhook(raw.URL, old), paymentstest.WithWebhookRetryWait(time.Millisecond))
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
	_, err = payments.ConstructEvent(got[0].body, got[0].header, old)
	require.NoError(t, err, "the first attempt: Payments-Signature")
	assert.Empty(t, got[0].header.Get(payments.StandardIDHeader))
	v, err := payments.NewStandardVerifier([]string{s})
	require.NoError(t, err)
	for _, d := range got[1:] {
		require.NoError(t, v.Verify(d.body, d.header), "after the switch: Standard Webhooks")
		assert.Empty(t, d.header.Get(payments.SignatureHeader))
	}
	log := srv.Deliveries()
	require.Len(t, log[0].Attempts, 2)
	assert.Equal(t, paymentstest.SchemePayments, log[0].Attempts[0].Scheme)
	assert.Equal(t, paymentstest.SchemeStandard, log[0].Attempts[1].Scheme)
	assert.Equal(t, log[0].EventID, got[1].header.Get(payments.StandardIDHeader))

	// Back to the payments scheme without a secret: unsigned, and refused.
	require.NoError(t, srv.SetWebhookScheme(paymentstest.SchemePayments))
	assert.Empty(t, srv.WebhookSecrets())
	_, err = c.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
	require.NoError(t, err)
	waitDeliveries(t, srv)
	last := raw.deliveries()[3]
	_, err = payments.ConstructEvent(last.body, last.header, old)
	require.ErrorIs(t, err, payments.ErrMalformedSignatureHeader, "t=... only: no v1 signature")
	assert.Regexp(t, `^t=\d+$`, last.header.Get(payments.SignatureHeader))
}

// TestAdminReportsTheScheme: the admin API says how deliveries are signed,
// attempt by attempt, and never shows a secret.
func TestAdminReportsTheScheme(t *testing.T) {
	s := newStandardSecret(t)
	raw := newReceiver(t, nil)
	srv, c := startAdmin(t, paymentstest.WithWebhookScheme(paymentstest.SchemeStandard),
		paymentstest.WithWebhook(raw.URL, s), paymentstest.WithWebhookRetryWait(time.Millisecond))
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
	assert.Equal(t, raw.deliveries()[0].header.Get(payments.StandardSignatureHeader), a.Signature)

	require.NoError(t, srv.SetWebhookScheme(paymentstest.SchemePayments, "p"))
	res = send(t, srv, http.MethodGet, "/_sandbox/webhook-url", "", nil)
	assert.Equal(t, setting{raw.URL + "/hooks", "payments"}, data[setting](t, res))
	for _, path := range []string{"/_sandbox/webhook-url", "/_sandbox/deliveries"} {
		body := send(t, srv, http.MethodGet, path, "", nil).body
		assert.NotContains(t, string(body), strings.TrimPrefix(s, "whsec_"), "%s shows no secret", path)
	}
}
