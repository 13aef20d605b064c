package payments_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// Webhooks.ListEvents against paymentstest's event log. Each recipient
// created there emits two events: recipient.created, recipient.verified.

// whListFake starts a fake with n recipients, so 2n events, and returns it
// with a client.
func whListFake(t *testing.T, n int) (*paymentstest.Server, *payments.Client) {
	t.Helper()
	srv := paymentstest.NewServer()
	t.Cleanup(srv.Close)
	c := srv.Client()
	for range n {
		_, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
			AccountNumber: "0123456789", AccountName: "Ada Okafor",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		})
		require.NoError(t, err)
	}
	return srv, c
}

// whListGets counts the list requests the fake received.
func whListGets(srv *paymentstest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && r.Path == "/webhooks/events" {
			n++
		}
	}
	return n
}

func whLogIDs(srv *paymentstest.Server, keep func(paymentstest.Event) bool) []string {
	var ids []string
	for _, ev := range srv.Events() {
		if keep == nil || keep(ev) {
			ids = append(ids, ev.ID)
		}
	}
	return ids
}

func TestListEventsWalksEveryPageOfTheFake(t *testing.T) {
	srv, c := whListFake(t, 3)
	var got []*payments.Event
	for ev, err := range c.Webhooks.ListEvents(context.Background(), &payments.EventListParams{Limit: 2}) {
		require.NoError(t, err)
		got = append(got, ev)
	}
	log := srv.Events()
	require.Len(t, got, 6)
	for i, ev := range got {
		want, err := payments.ParseEvent(log[i].Body)
		require.NoError(t, err)
		assert.Equal(t, want, ev, "event %d is the *Event its webhook delivery gives", i)
	}
	assert.Equal(t, 3, whListGets(srv), "three full pages; the last says has_more false")
}

func TestListEventsEmptyLog(t *testing.T) {
	srv, c := whListFake(t, 0)
	page, err := c.Webhooks.ListEventsPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, page.Events)
	assert.False(t, page.HasMore)
	assert.JSONEq(t, `{"events":[],"has_more":false}`, string(page.RawJSON()))
	ids, errs := whCollect(c.Webhooks.ListEvents(context.Background(), nil))
	assert.Empty(t, ids)
	assert.Empty(t, errs)
	assert.Equal(t, 2, whListGets(srv))
}

func TestListEventsFilters(t *testing.T) {
	srv, c := whListFake(t, 2)
	srv.Advance(time.Hour)
	cut := srv.Now()
	_, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "9876543210", AccountName: "Bayo Ade",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	log := srv.Events()
	require.Len(t, log, 6)

	list := func(p *payments.EventListParams) []string {
		t.Helper()
		ids, errs := whCollect(c.Webhooks.ListEvents(context.Background(), p))
		require.Empty(t, errs)
		return ids
	}
	verified := func(ev paymentstest.Event) bool { return ev.Type == payments.EventRecipientVerified }
	assert.Equal(t, whLogIDs(srv, verified),
		list(&payments.EventListParams{Types: []payments.EventType{payments.EventRecipientVerified}, Limit: 1}))
	assert.Equal(t, whLogIDs(srv, func(ev paymentstest.Event) bool { return !ev.CreatedAt.Before(cut) }),
		list(&payments.EventListParams{Since: cut}), "since is inclusive")
	assert.Equal(t, whLogIDs(srv, nil)[2:], list(&payments.EventListParams{After: log[1].ID}),
		"after lists the events after the checkpoint, not the checkpoint itself")
	assert.Equal(t, []string{log[3].ID, log[5].ID}, list(&payments.EventListParams{
		After: log[1].ID, Types: []payments.EventType{payments.EventRecipientVerified},
	}))
	assert.Empty(t, list(&payments.EventListParams{After: log[5].ID}), "nothing after the newest")
}

func TestListEventsUnknownCursor(t *testing.T) {
	srv, c := whListFake(t, 1)
	_, err := c.Webhooks.ListEventsPage(context.Background(), &payments.EventListParams{After: "no-such-event"})
	require.ErrorIs(t, err, payments.CodeUnknownEventCursor)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	assert.Equal(t, 1, apiErr.Attempts)
	assert.Equal(t, 1, whListGets(srv))
}

func TestListEventsStopsWhenCancelledBetweenPages(t *testing.T) {
	srv, c := whListFake(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		ids  []string
		errs []error
	)
	for ev, err := range c.Webhooks.ListEvents(ctx, &payments.EventListParams{Limit: 2}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, ev.ID)
		if len(ids) == 2 {
			cancel() // the merchant shuts down after the first page
		}
	}
	assert.Equal(t, whLogIDs(srv, nil)[:2], ids)
	require.Len(t, errs, 1, "the stop is reported, once")
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.Contains(t, errs[0].Error(), ids[1], "says where to resume")
	assert.Equal(t, 1, whListGets(srv), "no request after the cancellation")
}

func TestListEventsBreakSendsNothingMore(t *testing.T) {
	srv, c := whListFake(t, 3)
	for ev, err := range c.Webhooks.ListEvents(context.Background(), &payments.EventListParams{Limit: 2}) {
		require.NoError(t, err)
		if ev.ID != "" {
			break
		}
	}
	assert.Equal(t, 1, whListGets(srv))
}

func TestListEventsPageRetriedOn503(t *testing.T) {
	srv, c := whListFake(t, 1)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 2}))
	page, err := c.Webhooks.ListEventsPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, page.Events, 2)
	assert.Equal(t, 3, page.LastResponse().Attempts)
	assert.Empty(t, page.LastResponse().IdempotencyKey)
	var statuses []int
	for _, r := range srv.Requests() {
		if r.Path == "/webhooks/events" {
			statuses = append(statuses, r.StatusCode)
			assert.Empty(t, r.IdempotencyKey, "a GET is retried without a key")
		}
	}
	assert.Equal(t, []int{503, 503, 200}, statuses)

	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 10}))
	_, errs := whCollect(srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2})).Webhooks.ListEvents(context.Background(), nil))
	require.Len(t, errs, 1)
	var apiErr *payments.APIError
	require.True(t, errors.As(errs[0], &apiErr))
	assert.Equal(t, 2, apiErr.Attempts, "the first attempt and one retry")
	assert.True(t, apiErr.Temporary())
}

func TestListEventsIncludesTriggeredEvents(t *testing.T) {
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(receiver.Close)
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{"whsec_test"}}))
	t.Cleanup(srv.Close)
	c := srv.Client()
	_, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	var evs []*payments.Event
	for ev, err := range c.Webhooks.ListEvents(context.Background(), nil) {
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	require.Len(t, evs, 1)
	assert.True(t, webhook.Triggered(evs[0]))
	assert.True(t, slices.Equal(whLogIDs(srv, nil), []string{evs[0].ID}))
}
