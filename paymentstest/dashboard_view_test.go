package paymentstest_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

var paymentIDs = regexp.MustCompile(`<article class="payment" data-id="([^"]+)"`)

// shownPayments lists the payments a dashboard page shows, by id.
func shownPayments(p page) []string {
	var ids []string
	for _, m := range paymentIDs.FindAllStringSubmatch(p.body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestDashboardFindsAPaymentByReferenceOrShortID: the page's finder (the
// resource filter) takes a payment's reference, its whole id, or the short
// id the page shows, and narrows the payments and the events to it.
func TestDashboardFindsAPaymentByReferenceOrShortID(t *testing.T) {
	srv, c, _ := dashServer(t)
	r := createRecipient(t, c, "")
	other := initiate(t, c, r.ID, "75", "order-dash-2")
	first := srv.PaymentsByReference("order-dash-1")[0]
	all := dashGet(t, srv.URL()+"/_dashboard/", nil)
	assert.ElementsMatch(t, []string{first.ID, other.ID}, shownPayments(all))
	assert.Contains(t, all.body, `id="find-payment"`)

	for _, q := range []string{"order-dash-2", other.ID, other.ID[:8]} {
		p := dashGet(t, srv.URL()+"/_dashboard/?"+url.Values{"resource": {q}}.Encode(), nil)
		require.Equal(t, http.StatusOK, p.status, q)
		assert.Equal(t, []string{other.ID}, shownPayments(p), q)
		assert.Contains(t, p.body, `data-kind="payment.initiated"`, "%s: its event", q)
		assert.NotContains(t, p.body, `data-kind="recipient.created"`, "%s: only its events", q)
	}
	p := dashGet(t, srv.URL()+"/_dashboard/?resource="+other.ID[:3], nil)
	assert.Empty(t, shownPayments(p), "3 characters are too few to name an id")
	p = dashGet(t, srv.URL()+"/_dashboard/?resource=order-dash", nil)
	assert.Empty(t, shownPayments(p), "a reference is matched whole")
}

// stateOf returns the state the page shows for payment id.
func stateOf(t *testing.T, p page, id string) string {
	t.Helper()
	re := regexp.MustCompile(`data-id="` + regexp.QuoteMeta(id) + `">\s*<h3>.*?<span class="status state-([a-z]+)" title="status ([a-z]+)">([^<]+)</span>`)
	m := re.FindStringSubmatch(p.body)
	require.NotNil(t, m, "payment %s on the page", id)
	return m[1] + "/" + m[2] + "/" + m[3]
}

// TestDashboardTellsAQuoteFromAPaymentInProgress: the service calls both
// pending; the page shows an unconfirmed quote, an expired one and a
// confirmed payment still processing each its own way.
func TestDashboardTellsAQuoteFromAPaymentInProgress(t *testing.T) {
	srv, c, _ := dashServer(t, paymentstest.WithProcessingDelay(time.Hour))
	quote := srv.PaymentsByReference("order-dash-1")[0]
	r := createRecipient(t, c, "")
	late := initiate(t, c, r.ID, paymentstest.AmountCompletesLate, "order-dash-late")
	_, err := c.Payments.Confirm(ctx(t), late.ConfirmParams())
	require.NoError(t, err)
	done := initiate(t, c, r.ID, "10", "order-dash-done")
	_, err = c.Payments.Confirm(ctx(t), done.ConfirmParams())
	require.NoError(t, err)

	p := dashGet(t, srv.URL()+"/_dashboard/", nil)
	assert.Equal(t, "quote/pending/quote, not confirmed", stateOf(t, p, quote.ID))
	assert.Equal(t, "processing/pending/processing", stateOf(t, p, late.ID))
	assert.Equal(t, "completed/completed/completed", stateOf(t, p, done.ID))

	srv.Advance(5*time.Minute + time.Second)
	p = dashGet(t, srv.URL()+"/_dashboard/", nil)
	assert.Equal(t, "expired/pending/quote expired", stateOf(t, p, quote.ID))
	assert.Equal(t, "processing/pending/processing", stateOf(t, p, late.ID), "a confirmed payment does not expire")
}

// TestDashboardShowsTheBodySentAndTheResponseHeaders: each event shows the
// body that was sent (account numbers masked, amounts whole), and each
// attempt the receiver's response headers.
func TestDashboardShowsTheBodySentAndTheResponseHeaders(t *testing.T) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Receiver-Trace", "abc-123")
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.Close)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithSandbox(paymentstest.Sandbox{Dashboard: true}))...)
	r := createRecipient(t, c, "")
	initiate(t, c, r.ID, "12345678.90", "order-dash-body")
	waitDeliveries(t, srv)

	p := dashGet(t, srv.URL()+"/_dashboard/", nil)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "X-Receiver-Trace: abc-123")
	assert.Contains(t, p.body, "HTTP 202")
	bodies := regexp.MustCompile(`(?s)<pre class="event-body">(.*?)</pre>`).FindAllStringSubmatch(p.body, -1)
	require.Len(t, bodies, len(srv.Events()), "one body per event")
	var initiated string
	for _, b := range bodies {
		if strings.Contains(b[1], string(payments.EventPaymentInitiated)) {
			initiated = b[1]
		}
	}
	require.NotEmpty(t, initiated)
	assert.Contains(t, initiated, "12345678.9", "amounts are shown whole")
	assert.Contains(t, initiated, "order-dash-body")
	masked := 0
	for _, b := range bodies {
		assert.NotContains(t, b[1], "0123456789", "no whole account number")
		masked += strings.Count(b[1], "••••6789")
	}
	assert.Positive(t, masked, "the recipient's events show its account number masked")
}
