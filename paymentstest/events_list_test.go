package paymentstest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

type eventPageData struct {
	Events  []json.RawMessage `json:"events"`
	HasMore bool              `json:"has_more"`
}

// listPage sends GET /webhooks/events with query and decodes a 200 page.
func listPage(t *testing.T, srv *paymentstest.Server, query string) eventPageData {
	t.Helper()
	res := send(t, srv, http.MethodGet, "/webhooks/events"+query, "", nil)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	require.True(t, res.env.Success)
	return data[eventPageData](t, res)
}

func TestListEventsPageIsTheWebhookBodies(t *testing.T) {
	srv, c := start(t)
	createRecipient(t, c, "")
	createRecipient(t, c, "")
	log := srv.Events()
	require.Len(t, log, 4)

	p := listPage(t, srv, "?limit=3")
	require.Len(t, p.Events, 3)
	assert.True(t, p.HasMore)
	for i, raw := range p.Events {
		assert.Equal(t, string(log[i].Body), string(raw), "event %d byte for byte as delivered", i)
	}
	p = listPage(t, srv, "?limit=3&after="+url.QueryEscape(log[2].ID))
	require.Len(t, p.Events, 1)
	assert.False(t, p.HasMore)
	assert.Equal(t, string(log[3].Body), string(p.Events[0]))

	p = listPage(t, srv, "?limit=2&after="+log[1].ID)
	assert.Len(t, p.Events, 2)
	assert.False(t, p.HasMore, "exactly the rest: no empty page to fetch")

	res := send(t, srv, http.MethodGet, "/webhooks/events", "", nil)
	assert.Contains(t, string(res.body), `"data":{"events":[`)
}

func TestListEventsDefaultLimitIs50(t *testing.T) {
	srv, c := start(t)
	for range 26 { // 52 events
		createRecipient(t, c, "")
	}
	p := listPage(t, srv, "")
	assert.Len(t, p.Events, 50)
	assert.True(t, p.HasMore)
	assert.Len(t, listPage(t, srv, "?limit=100").Events, 52)
}

func TestListEventsEmpty(t *testing.T) {
	srv, _ := start(t)
	res := send(t, srv, http.MethodGet, "/webhooks/events", "", nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.JSONEq(t, `{"events":[],"has_more":false}`, string(res.env.Data), "a list, never null")
}

func TestListEventsFiltersByTypeAndSince(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 123_456_789, time.UTC)
	srv, c := start(t, paymentstest.WithClock(func() time.Time { return t0 }))
	createRecipient(t, c, "")
	srv.Advance(time.Minute)
	createRecipient(t, c, "")
	log := srv.Events()

	p := listPage(t, srv, "?type=recipient.verified&type=payment.completed")
	require.Len(t, p.Events, 2)
	assert.Equal(t, string(log[1].Body), string(p.Events[0]))
	assert.Equal(t, string(log[3].Body), string(p.Events[1]))

	// created_at is sent to the millisecond; since, inclusive, compares
	// with what the client saw.
	seen := t0.Add(time.Minute).Truncate(time.Millisecond).Format(time.RFC3339Nano)
	p = listPage(t, srv, "?since="+url.QueryEscape(seen))
	require.Len(t, p.Events, 2)
	assert.Equal(t, string(log[2].Body), string(p.Events[0]))
	p = listPage(t, srv, "?since="+url.QueryEscape(t0.Add(time.Minute+time.Millisecond).Format(time.RFC3339Nano)))
	assert.Empty(t, p.Events)
	p = listPage(t, srv, "?since=2030-01-02T04:04:05%2B01:00&type=recipient.created") // t0, another zone
	require.Len(t, p.Events, 2)
	assert.Equal(t, string(log[0].Body), string(p.Events[0]))
}

func TestListEventsRefusesBadQueries(t *testing.T) {
	srv, c := start(t)
	createRecipient(t, c, "")
	res := send(t, srv, http.MethodGet,
		"/webhooks/events?limit=0&since=yesterday&type=payment.done&starting_after=x&after=a&after=b", "", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.status, "body: %s", res.body)
	assert.Equal(t, string(payments.CodeValidationFailed), res.env.Code)
	assert.Equal(t, []string{"after", "starting_after", "since", "limit", "type"}, res.fields(), "every bad parameter at once")

	for _, q := range []string{"limit=101", "limit=-1", "limit=1.5", "limit=%2B5", "after=", "since=2030-01-02"} {
		res := send(t, srv, http.MethodGet, "/webhooks/events?"+q, "", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, q)
	}
	res = send(t, srv, http.MethodGet, "/webhooks/events?a=%zz", "", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, []string{"query"}, res.fields())
}

func TestListEventsUnknownCursor(t *testing.T) {
	srv, c := start(t, paymentstest.WithLogLimit(2))
	createRecipient(t, c, "")
	first := srv.Events()[0].ID
	createRecipient(t, c, "") // the log keeps 2 events: the first is gone

	for _, after := range []string{"no-such-event", first} {
		res := send(t, srv, http.MethodGet, "/webhooks/events?after="+after, "", nil)
		require.Equal(t, http.StatusBadRequest, res.status, "body: %s", res.body)
		assert.Equal(t, string(payments.CodeUnknownEventCursor), res.env.Code)
		assert.Equal(t, []string{"after"}, res.fields())
		assert.Contains(t, res.env.Message, "since")
	}
}

func TestListEventsIncludesTriggeredEvents(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	createRecipient(t, c, "")
	_, err := c.Webhooks.Trigger(ctx(t), payments.EventPaymentFailed)
	require.NoError(t, err)

	p := listPage(t, srv, "?type=payment.failed")
	require.Len(t, p.Events, 1)
	ev, err := payments.ParseEvent(p.Events[0])
	require.NoError(t, err)
	assert.True(t, webhook.Triggered(ev))
	assert.True(t, strings.Contains(string(p.Events[0]), "test_trigger_"))
	assert.Len(t, listPage(t, srv, "").Events, 3, "live and triggered alike")
}

func TestListEventsOtherMethods(t *testing.T) {
	srv, _ := start(t)
	res := send(t, srv, http.MethodPost, "/webhooks/events", `{}`, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.status)
	assert.Equal(t, "GET", res.header.Get("Allow"))
}
