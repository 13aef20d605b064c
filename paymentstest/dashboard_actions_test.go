package paymentstest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// act posts a dashboard action with the page's token and returns the page
// it leads to (following the redirect of a success).
func act(t *testing.T, srv *paymentstest.Server, action string, form url.Values) page {
	t.Helper()
	form.Set("token", tokenOf(t, dashGet(t, srv.DashboardURL(), nil)))
	p := dashPost(t, srv, action, form, nil)
	if p.status == http.StatusSeeOther {
		return dashGet(t, srv.URL()+p.header.Get("Location"), nil)
	}
	return p
}

func TestDashboardRedeliver(t *testing.T) {
	srv, _, rc := dashServer(t)
	ev := srv.Events()[0]
	p := act(t, srv, "redeliver", url.Values{"event": {ev.ID}})
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "Event "+ev.ID+" queued for delivery again to "+rc.URL)
	waitDeliveries(t, srv)
	assert.Len(t, rc.deliveries(), len(srv.Events())+1)

	other := newReceiver(t, nil)
	act(t, srv, "redeliver", url.Values{"event": {ev.ID}, "url": {other.URL}})
	waitDeliveries(t, srv)
	assert.Len(t, other.deliveries(), 1)
}

func TestDashboardActionsRefuseBadInput(t *testing.T) {
	srv, _, _ := dashServer(t)
	events, deliveries, now, hook := len(srv.Events()), len(srv.Deliveries()), srv.Now(), srv.WebhookURL()
	for _, tc := range []struct {
		action string
		form   url.Values
		says   string
	}{
		{"redeliver", url.Values{"event": {"no-such-event"}}, `no event &#34;no-such-event&#34; in the event log`},
		{"trigger", url.Values{"kind": {"payment.exploded"}}, "unknown event type"},
		{"trigger", url.Values{"kind": {"payment.completed"}, "resource": {"nope"}}, "no payment with id"},
		{"advance", url.Values{"duration": {"-1h"}}, "the clock only moves forward"},
		{"advance", url.Values{"duration": {"soon"}}, "give a Go duration"},
		{"webhook-url", url.Values{"url": {"not a url"}}, "absolute http or https URL"},
		{"redeliver", url.Values{"event": {srv.Events()[0].ID}, "url": {"ftp://x"}}, "absolute http or https URL"},
		{"retries", url.Values{"waits": {"1s,forever"}}, "Go durations"},
		{"settle", url.Values{"payment": {srv.Payments()[0].ID}, "outcome": {"completed"}}, "not confirmed"},
	} {
		p := act(t, srv, tc.action, tc.form)
		assert.Equal(t, http.StatusOK, p.status, "%s %v: the page, after the redirect", tc.action, tc.form)
		assert.Contains(t, p.body, `id="problem"`, "%s %v", tc.action, tc.form)
		assert.Contains(t, p.body, tc.says, "%s %v", tc.action, tc.form)
	}
	assert.Len(t, srv.Events(), events)
	assert.Len(t, srv.Deliveries(), deliveries)
	assert.Less(t, srv.Now().Sub(now), time.Minute, "the clock did not move")
	assert.Equal(t, hook, srv.WebhookURL())
	assert.Len(t, srv.WebhookRetryWaits(), 4)
}

// TestDashboardRefusalRedirectsToThePage: bad input answers like a
// success, 303 to the page's own address with the problem, so that the
// page's live updates go on (they poll the address the browser is at) and
// a reload shows the page with the problem again, not a 405 of the
// POST-only action URL.
func TestDashboardRefusalRedirectsToThePage(t *testing.T) {
	srv, _, _ := dashServer(t)
	form := url.Values{"duration": {"-1h"}, "token": {tokenOf(t, dashGet(t, srv.URL()+"/_dashboard/", nil))}}
	p := dashPost(t, srv, "advance", form, nil)
	require.Equal(t, http.StatusSeeOther, p.status)
	loc := p.header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/_dashboard/?problem="), "Location %q", loc)
	for range 2 { // the page, then a reload of it
		got := dashGet(t, srv.URL()+loc, nil)
		assert.Equal(t, http.StatusOK, got.status)
		assert.Contains(t, got.body, `id="problem"`)
		assert.Contains(t, got.body, "the clock only moves forward")
	}
	live := dashGet(t, srv.URL()+loc, map[string]string{"X-Dashboard-Live": "1"})
	assert.Equal(t, http.StatusOK, live.status, "the live update of the page it lands on")
	assert.Contains(t, live.body, `id="now"`)
}

func TestDashboardActionsChangeTheServer(t *testing.T) {
	srv, c, rc := dashServer(t, paymentstest.WithProcessingDelay(time.Hour))
	r := srv.Recipients()[0]

	p := act(t, srv, "trigger", url.Values{"kind": {"recipient.verified"}, "resource": {r.ID}})
	assert.Contains(t, p.body, "Event recipient.verified")
	waitDeliveries(t, srv)
	last := rc.deliveries()[len(rc.deliveries())-1]
	ev, err := payments.ParseEvent(last.body)
	require.NoError(t, err)
	got, err := ev.Recipient()
	require.NoError(t, err)
	assert.Equal(t, r.ID, got.ID)

	act(t, srv, "pause", url.Values{"pause": {"1"}})
	assert.True(t, srv.DeliveriesPaused())
	assert.Contains(t, dashGet(t, srv.DashboardURL(), nil).body, `id="paused"`)
	act(t, srv, "pause", url.Values{"pause": {"0"}})
	assert.False(t, srv.DeliveriesPaused())

	before := srv.Now()
	act(t, srv, "advance", url.Values{"duration": {"5m1s"}})
	assert.GreaterOrEqual(t, srv.Now().Sub(before), 5*time.Minute+time.Second)

	act(t, srv, "retries", url.Values{"waits": {"1ms,2ms"}})
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, srv.WebhookRetryWaits())
	other := newReceiver(t, nil)
	act(t, srv, "webhook-url", url.Values{"url": {other.URL}})
	assert.Equal(t, other.URL, srv.WebhookURL())

	late := initiate(t, c, r.ID, paymentstest.AmountCompletesLate, "order-dash-late")
	_, err = c.Payments.Confirm(ctx(t), &payments.PaymentConfirmParams{Reference: late.Reference, QuoteID: late.Quote.QuoteID})
	require.NoError(t, err)
	page := dashGet(t, srv.DashboardURL(), nil)
	assert.Equal(t, 1, strings.Count(page.body, `value="rejected"`), "a settle form for the pending payment only")
	act(t, srv, "settle", url.Values{"payment": {late.ID}, "outcome": {"rejected"}})
	settled, _ := srv.Payment(late.ID)
	assert.Equal(t, payments.PaymentStatusRejected, settled.Status)
}
