package payments_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestWireWebhooksTrigger(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.completed",
		jsonResponder(200, `{"success":true,"message":"Test event sent","stan":"`+stanUUID+`"}`))

	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	assert.Equal(t, payments.EventPaymentCompleted, res.EventType)
	assert.Nil(t, res.Data)
	require.NotNil(t, res.LastResponse())
	assert.Equal(t, "Test event sent", res.LastResponse().Message)
	assert.Equal(t, stanUUID, res.LastResponse().Stan)

	req := h.onlyRequest(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/webhooks/events/trigger/payment.completed", req.Path)
	assert.False(t, req.HasBody)
	assert.Empty(t, assertSDKHeaders(t, req, false, false))
}

func TestWireWebhooksTriggerKeepsData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/recipient.verified",
		jsonResponder(200, okEnvelope(`{"delivery_id":"d-1","queued":true}`)))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventRecipientVerified)
	require.NoError(t, err)
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.Data))
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.RawJSON()))
}

func TestWireWebhooksTriggerNoContent(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.failed", httpmock.NewStringResponder(http.StatusNoContent, ""))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentFailed)
	require.NoError(t, err)
	assert.Nil(t, res.Data)
	assert.Equal(t, http.StatusNoContent, res.LastResponse().StatusCode)
}

func TestWirePathParametersAreEscaped(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/..%2Fadmin", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/brand.new_kind", jsonResponder(200, `{"success":true}`))

	for _, ev := range []payments.EventType{"a/b?c=d#e", "../admin", "brand.new_kind"} {
		_, err := h.client.Webhooks.Trigger(context.Background(), ev)
		require.NoError(t, err, ev)
	}
	reqs := h.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", reqs[0].Path)
	assert.Empty(t, reqs[0].RawQuery)
	assert.Equal(t, "/webhooks/events/trigger/..%2Fadmin", reqs[1].Path)
	assert.Equal(t, "/webhooks/events/trigger/brand.new_kind", reqs[2].Path, "unknown event names are sent as given")
}

// whListEvent is an event of a listed page, in the webhook body's shape.
func whListEvent(n int) string {
	return fmt.Sprintf(`{"id":"evt-%d","event":"payment.completed","created_at":"2025-01-31T09:00:0%d.000Z","data":{"id":"%s","reference":"order-%d","amount":"100.00","currency":"NGN"}}`,
		n, n%10, whPaymentID, n)
}

// whListPage is the envelope of a page holding events from..to.
func whListPage(from, to int, hasMore bool) string {
	var evs []string
	for n := from; n <= to; n++ {
		evs = append(evs, whListEvent(n))
	}
	return okEnvelope(fmt.Sprintf(`{"events":[%s],"has_more":%t}`, strings.Join(evs, ","), hasMore))
}

// whPager answers GET /webhooks/events by its after parameter.
func whPager(t *testing.T, pages map[string]httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		r, ok := pages[req.URL.Query().Get("after")]
		if !ok {
			t.Errorf("unexpected page request %s", req.URL)
			return httpmock.NewStringResponse(http.StatusTeapot, ""), nil
		}
		return r(req)
	}
}

// whCollect runs a ListEvents loop to its end, and returns the ids yielded
// and every error yielded.
func whCollect(seq iter.Seq2[*payments.Event, error]) (ids []string, errs []error) {
	for ev, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, ev.ID)
	}
	return ids, errs
}

func TestWireListEventsQuery(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", jsonResponder(200, whListPage(1, 2, false)))

	since := time.Date(2025, 1, 31, 10, 0, 0, 500_000_000, time.FixedZone("WAT", 3600))
	page, err := h.client.Webhooks.ListEventsPage(context.Background(), &payments.EventListParams{
		Since: since, After: "evt-0", Limit: 10,
		Types: []payments.EventType{payments.EventPaymentCompleted, "brand.new_kind"},
	})
	require.NoError(t, err)

	req := h.onlyRequest(t)
	assert.Equal(t, http.MethodGet, req.Method)
	assert.Equal(t, "/webhooks/events", req.Path)
	assert.Equal(t, "after=evt-0&limit=10&since=2025-01-31T09%3A00%3A00.5Z&type=payment.completed&type=brand.new_kind", req.RawQuery,
		"since in UTC, types repeated in the order given")
	assert.False(t, req.HasBody)
	assert.Empty(t, assertSDKHeaders(t, req, false, false), "a GET needs no Idempotency-Key")

	require.Len(t, page.Events, 2)
	assert.False(t, page.HasMore)
	assert.Nil(t, page.NextParams())
	assert.Equal(t, stanUUID, page.LastResponse().Stan)
	for i, ev := range page.Events {
		want, err := payments.ParseEvent([]byte(whListEvent(i + 1)))
		require.NoError(t, err)
		assert.Equal(t, want, ev, "a listed event is the *Event of a delivery of the same body")
		assert.JSONEq(t, whListEvent(i+1), string(ev.RawJSON()))
	}
	p, err := page.Events[1].Payment()
	require.NoError(t, err)
	assert.Equal(t, "order-2", p.Reference)
}

func TestWireListEventsWithoutParamsSendsNoQuery(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", jsonResponder(200, whListPage(1, 0, false)))
	ids, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), nil))
	assert.Empty(t, errs)
	assert.Empty(t, ids, "an empty page ends the list")
	assert.Empty(t, h.onlyRequest(t).RawQuery)
}

func TestListEventsValidation(t *testing.T) {
	h := newHarness(t) // any request fails the test
	params := &payments.EventListParams{
		Limit: 101, After: "evt 1",
		Since: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		Types: []payments.EventType{payments.EventPaymentFailed, "", "payment.\ncompleted"},
	}
	_, err := h.client.Webhooks.ListEventsPage(context.Background(), params)
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.ErrorIs(t, err, payments.ErrInvalidParams)
	var fields []string
	for _, f := range verr.Fields {
		fields = append(fields, f.Field)
	}
	assert.Equal(t, []string{"limit", "after", "since", "type[1]", "type[2]"}, fields, "every bad field at once")
	assert.NotContains(t, err.Error(), "evt 1", "values are not repeated")

	_, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), &payments.EventListParams{Limit: -1}))
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], payments.ErrInvalidParams)
	assert.Empty(t, h.requests(), "nothing was sent")
}

func TestWireListEventsPages(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", whPager(t, map[string]httpmock.Responder{
		"":      jsonResponder(200, whListPage(1, 2, true)),
		"evt-2": jsonResponder(200, whListPage(3, 4, true)),
		"evt-4": jsonResponder(200, whListPage(5, 5, false)),
	}))
	ids, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(),
		&payments.EventListParams{Limit: 2, Types: []payments.EventType{payments.EventPaymentCompleted}}))
	assert.Empty(t, errs)
	assert.Equal(t, []string{"evt-1", "evt-2", "evt-3", "evt-4", "evt-5"}, ids)
	var queries []string
	for _, r := range h.requests() {
		queries = append(queries, r.RawQuery)
	}
	assert.Equal(t, []string{
		"limit=2&type=payment.completed",
		"after=evt-2&limit=2&type=payment.completed",
		"after=evt-4&limit=2&type=payment.completed",
	}, queries, "each page continues after the last event of the one before, with the same filters")
}

func TestWireListEventsErrorOnThirdPage(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", whPager(t, map[string]httpmock.Responder{
		"":      jsonResponder(200, whListPage(1, 2, true)),
		"evt-2": jsonResponder(200, whListPage(3, 4, true)),
		"evt-4": jsonResponder(http.StatusBadRequest, `{"success":false,"message":"bad cursor","stan":"`+stanUUID+`","code":"unknown_cursor"}`),
	}))
	var (
		ids      []string
		errs     []error
		afterErr int
	)
	for ev, err := range h.client.Webhooks.ListEvents(context.Background(), nil) {
		switch {
		case len(errs) > 0:
			afterErr++
		case err != nil:
			errs = append(errs, err)
		default:
			ids = append(ids, ev.ID)
		}
	}
	assert.Equal(t, []string{"evt-1", "evt-2", "evt-3", "evt-4"}, ids, "the first two pages stand")
	require.Len(t, errs, 1)
	assert.Zero(t, afterErr, "nothing after the error")
	var apiErr *payments.APIError
	require.ErrorAs(t, errs[0], &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	assert.Equal(t, stanUUID, apiErr.Stan)
	assert.ErrorIs(t, errs[0], payments.CodeUnknownEventCursor)
	assert.Len(t, h.requests(), 3, "a 400 is not retried")
}

func TestWireListEventsNotAvailable(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", jsonResponder(http.StatusNotFound, errorEnvelope("Not Found")))
	_, err := h.client.Webhooks.ListEventsPage(context.Background(), nil)
	require.ErrorIs(t, err, payments.ErrListEventsUnavailable)
	assert.ErrorIs(t, err, payments.ErrNotFound)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr, "still an *APIError underneath")
	assert.Equal(t, stanUUID, apiErr.Stan)
	assert.Contains(t, err.Error(), "Client.Do")
	assert.Contains(t, err.Error(), stanUUID)

	_, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), nil))
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], payments.ErrListEventsUnavailable)
}

func TestWireListEventsMalformedPages(t *testing.T) {
	for name, data := range map[string]string{
		"no events member":        `{"has_more":false}`,
		"events not a list":       `{"events":{"id":"evt-1"}}`,
		"an event without id":     `{"events":[{"event":"payment.completed"}]}`,
		"an event not an object":  `{"events":["evt-1"]}`,
		"has_more without events": `{"events":[],"has_more":true}`,
		"has_more not a bool":     `{"events":[],"has_more":"yes"}`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodGet, "/webhooks/events", jsonResponder(200, okEnvelope(data)))
			_, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), nil))
			require.Len(t, errs, 1)
			var malformed *payments.MalformedResponseError
			require.ErrorAs(t, errs[0], &malformed)
			assert.Len(t, h.requests(), 1)
		})
	}
}

func TestWireListEventsStopsOnAPageThatDoesNotAdvance(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", whPager(t, map[string]httpmock.Responder{
		"":      jsonResponder(200, whListPage(1, 1, true)),
		"evt-1": jsonResponder(200, whListPage(1, 1, true)),
	}))
	ids, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), nil))
	assert.Equal(t, []string{"evt-1", "evt-1"}, ids)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], payments.ErrMalformedResponse)
	assert.ErrorIs(t, errs[0], payments.ErrEventCursorCycle)
	assert.Len(t, h.requests(), 2, "no third request")
}

// Cursors that cycle (A, B, A) end the list with ErrEventCursorCycle at the
// first cursor met again, whether the loop or the caller listed after it
// first: the list used to go on for ever, a request per page.
func TestWireListEventsStopsWhenTheCursorsCycle(t *testing.T) {
	cycle := map[string]httpmock.Responder{
		"":      jsonResponder(200, whListPage(1, 2, true)),
		"evt-2": jsonResponder(200, whListPage(3, 4, true)),
		"evt-4": jsonResponder(200, whListPage(1, 2, true)), // back to evt-2
	}
	for _, tc := range []struct {
		after    string
		ids      []string
		requests int
	}{
		{"", []string{"evt-1", "evt-2", "evt-3", "evt-4", "evt-1", "evt-2"}, 3},
		{"evt-2", []string{"evt-3", "evt-4", "evt-1", "evt-2"}, 2},
	} {
		t.Run("after "+tc.after, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodGet, "/webhooks/events", whPager(t, cycle))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var (
				ids  []string
				errs []error
			)
			for ev, err := range h.client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: tc.after}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				ids = append(ids, ev.ID)
				require.Less(t, len(ids), 100, "the list never ends")
			}
			assert.Equal(t, tc.ids, ids, "the pages before the repeated cursor stand")
			require.Len(t, errs, 1)
			assert.ErrorIs(t, errs[0], payments.ErrEventCursorCycle)
			var malformed *payments.MalformedResponseError
			require.ErrorAs(t, errs[0], &malformed)
			assert.Equal(t, stanUUID, malformed.Response.Stan)
			assert.Contains(t, errs[0].Error(), "the page after event evt-4 ends at event evt-2, already listed after")
			assert.Len(t, h.requests(), tc.requests, "no request after the repeated cursor")
		})
	}
}

// FuzzListEventsPage: whatever a 200 answer holds, ListEventsPage returns
// a page of parsed events or a *MalformedResponseError (an *APIError for
// success false), and never panics.
func FuzzListEventsPage(f *testing.F) {
	f.Add([]byte(whListPage(1, 3, true)))
	f.Add([]byte(okEnvelope(`{"events":[],"has_more":false}`)))
	f.Add([]byte(okEnvelope(`{"events":[{"id":1,"type":"x","data":null}],"has_more":true}`)))
	f.Add([]byte(okEnvelope(`{"events":null}`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		h := newHarness(t, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
		h.on(http.MethodGet, "/webhooks/events", httpmock.NewBytesResponder(200, body))
		page, err := h.client.Webhooks.ListEventsPage(context.Background(), nil)
		if err != nil {
			var (
				malformed *payments.MalformedResponseError
				apiErr    *payments.APIError
			)
			if !errors.As(err, &malformed) && !errors.As(err, &apiErr) {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		for _, ev := range page.Events {
			if ev.ID == "" || ev.Type == "" {
				t.Fatalf("an event without id or kind: %+v", ev)
			}
		}
		if page.HasMore && page.NextParams() == nil {
			t.Fatal("has_more without a next page")
		}
	})
}

// TestListEventsPageWithoutHasMoreIsAnError: a page whose has_more is
// absent, null or not a boolean does not say whether more events follow
// (the service may page with another cursor): it is an error matching
// ErrEventPageUnreadable, never the end of the list; ListEvents yields the
// events of the pages before it, then that error.
func TestListEventsPageWithoutHasMoreIsAnError(t *testing.T) {
	for name, hasMore := range map[string]string{
		"absent":    ``,
		"null":      `,"has_more":null`,
		"a string":  `,"has_more":"true"`,
		"a number":  `,"has_more":1`,
		"an object": `,"has_more":{}`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodGet, "/webhooks/events", whPager(t, map[string]httpmock.Responder{
				"":      jsonResponder(200, whListPage(1, 2, true)),
				"evt-2": jsonResponder(200, okEnvelope(`{"events":[`+whListEvent(3)+`],"next_cursor":"evt-3"`+hasMore+`}`)),
			}))
			page, err := h.client.Webhooks.ListEventsPage(context.Background(), &payments.EventListParams{After: "evt-2"})
			assert.Nil(t, page)
			require.ErrorIs(t, err, payments.ErrEventPageUnreadable)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			assert.Equal(t, stanUUID, merr.Response.Stan)
			assert.Contains(t, err.Error(), "list with client.Do and parse each event with payments.ParseEvent")

			ids, errs := whCollect(h.client.Webhooks.ListEvents(context.Background(), nil))
			assert.Equal(t, []string{"evt-1", "evt-2"}, ids, "the events before the unreadable page")
			require.Len(t, errs, 1)
			assert.ErrorIs(t, errs[0], payments.ErrEventPageUnreadable)
		})
	}
}
