package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/surprise"
)

// WebhooksService triggers test webhook deliveries and lists the service's
// events (to learn those a receiver missed). Reach it as Client.Webhooks.
// Receiving webhooks needs no Client: see webhook.NewHandler and
// ConstructEvent.
type WebhooksService struct{ client *Client }

// TriggerResult is the service's answer to a test-event trigger. The
// specification does not describe it: Data is whatever the service returned
// (possibly nothing), and LastResponse gives the stan and message.
type TriggerResult struct {
	APIResource `json:"-"`

	// EventType is the event that was asked for.
	EventType EventType
	// Data is the envelope's data member as received, or nil.
	Data json.RawMessage
}

// Format prints the result's fields for every verb, its data as JSON text.
func (r TriggerResult) Format(f fmt.State, _ rune) { redact.FormatFields(f, r, r.secrets()...) }

// LogValue logs the result's fields, masked as Format masks them.
func (r TriggerResult) LogValue() slog.Value { return redact.LogFields(r, r.secrets()...) }

// Trigger asks the service to send a test webhook of the given kind (for
// example EventPaymentCompleted) to the URL configured in the merchant
// dashboard (POST /webhooks/events/trigger/{event_id}). The name is
// path-escaped; names the SDK does not know are sent as given.
//
// Use it to check a receiver end to end. Serve a handler made by
// webhook.NewHandler, with a SignatureVerifier holding the endpoint's signing
// secret, at the URL the dashboard has for your account (a tunnel to your
// machine works for development), then call Trigger and watch your EventFunc
// get the event:
//
//	v, err := webhook.NewSignatureVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
//	...
//	http.Handle("POST /webhooks", webhook.NewHandler(v, func(ctx context.Context, ev *payments.Event) error {
//		log.Printf("got %s %s", ev.Type, ev.ID)
//		return nil
//	}))
//	...
//	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
//
// A nil error means only that the service accepted the request: the delivery
// itself arrives asynchronously, and the handler treats it like any other
// (verified, deduplicated by event id, retried by the service on a non-200).
// A 401 logged by your handler usually means a wrong secret. What a test
// event's data contains is not specified, so an EventFunc should not move
// money on it without checking. For tests without the service, sign payloads
// yourself with SignPayload, or use the fake in paymentstest.
func (s *WebhooksService) Trigger(ctx context.Context, eventType EventType, opts ...RequestOption) (*TriggerResult, error) {
	var v validator
	v.required("event_id", string(eventType), maxEventTypeLen)
	if eventType == "." || eventType == ".." {
		// PathEscape leaves dots alone: the segment would climb the path.
		v.add("event_id", `must be an event name, not "." or ".."`)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	var data json.RawMessage
	r, err := s.client.do(ctx, opWebhooksTrigger, triggerPath(eventType), nil, &data, opts)
	if err != nil {
		return nil, err
	}
	res := &TriggerResult{EventType: eventType, Data: data}
	res.setResponse(r, data)
	return res, nil
}

// triggerPath is the path that triggers a test event of kind t.
func triggerPath(t EventType) string { return "/webhooks/events/trigger/" + url.PathEscape(string(t)) }

var opWebhooksTrigger = &operation{Operation: Operation{Name: "webhooks.trigger", Method: http.MethodPost, PathTemplate: "/webhooks/events/trigger/{event_id}"}, dataOptional: true, status: http.StatusOK}

// Listing events: GET /webhooks/events. The specification names the
// operation and shows neither its path nor its payload; this is the SDK's
// assumption, shared with paymentstest and the sandbox (README, Assumptions).
const (
	// EventListMaxLimit is the largest page EventListParams.Limit may ask for.
	EventListMaxLimit = 100
	// EventListDefaultLimit is the page size the service uses when
	// EventListParams.Limit is 0 (the SDK then sends no limit).
	EventListDefaultLimit = 50
)

// CodeUnknownEventCursor (400): EventListParams.After names an event the
// service does not know, or no longer keeps. Nothing was listed: start again
// from a time with EventListParams.Since.
const CodeUnknownEventCursor ErrorCode = "unknown_cursor"

// ErrListEventsUnavailable matches the error of ListEvents and
// ListEventsPage when the service answers 404: it has no list operation at
// GET /webhooks/events, the path this SDK assumes (the specification does
// not show it). The error is also an *APIError, with the stan. Call the
// service's own path with Client.Do, and parse each event with ParseEvent.
var ErrListEventsUnavailable = errors.New("payments: the service has no list-events operation at GET /webhooks/events " +
	"(the path is an assumption of this SDK; call the service's list operation with Client.Do)")

// ErrEventCursorCycle matches the error ListEvents yields when a page would
// continue after an event it has already continued after (the service's
// cursors cycle: A, B, A): the list would never end, a request per page. The
// error is also a *MalformedResponseError, with the page's stan; the events
// yielded before it stand.
var ErrEventCursorCycle = errors.New("payments: the service's event cursors cycle (the list would never end)")

// EventListParams selects the events ListEvents and ListEventsPage list.
// The zero value (or nil) lists every event the service keeps, oldest first.
type EventListParams struct {
	// Since, when not zero, lists only events created at or after it
	// (sent as RFC 3339 in UTC).
	Since time.Time
	// After, when set, lists only the events created after the event with
	// this id: a checkpoint is simply the id of the last event processed.
	// An id the service does not know fails with CodeUnknownEventCursor.
	After string
	// Types, when set, lists only events of these kinds. Kinds the SDK does
	// not know are sent as given.
	Types []EventType
	// Limit is the page size, from 1 to EventListMaxLimit; 0 leaves it to
	// the service (EventListDefaultLimit).
	Limit int
}

// maxEventIDLen bounds EventListParams.After.
const maxEventIDLen = 255

func (p *EventListParams) validate() error {
	var v validator
	if p.Limit < 0 || p.Limit > EventListMaxLimit {
		v.add("limit", fmt.Sprintf("must be from 1 to %d, or 0 for the service's default (%d)", EventListMaxLimit, EventListDefaultLimit))
	}
	if p.After != "" && (len(p.After) > maxEventIDLen || !printableASCII(p.After)) {
		v.add("after", fmt.Sprintf("must be an event id: 1 to %d printable ASCII characters without spaces", maxEventIDLen))
	}
	if y := p.Since.UTC().Year(); !p.Since.IsZero() && (y < 1 || y > 9999) {
		v.add("since", "must be a time between years 1 and 9999")
	}
	for i, t := range p.Types {
		if t == "" || len(t) > maxEventTypeLen || !printableASCII(string(t)) {
			v.add(fmt.Sprintf("type[%d]", i), fmt.Sprintf("must be an event kind such as payment.completed: 1 to %d printable ASCII characters without spaces", maxEventTypeLen))
		}
	}
	return v.err()
}

// query encodes p as the list's query string, keys sorted: after, limit,
// since, type (repeated, in the order given).
func (p *EventListParams) query() string {
	q := url.Values{}
	if p.After != "" {
		q.Set("after", p.After)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if !p.Since.IsZero() {
		q.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	}
	for _, t := range p.Types {
		q.Add("type", string(t))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// EventPage is one page of ListEventsPage: events oldest first, each the
// same *Event a webhook delivery gives (ParseEvent's shape), so that
// listed and delivered events can go through the same function.
// LastResponse gives the stan; RawJSON the page's data as received.
type EventPage struct {
	APIResource `json:"-"`

	// Events are the page's events, oldest first.
	Events []*Event
	// HasMore is true when more events follow this page: ask for them with
	// NextParams.
	HasMore bool

	params EventListParams
}

// NextParams returns the params of the page after this one (those of this
// page, with After set to its last event's id), or nil when HasMore is
// false.
func (p *EventPage) NextParams() *EventListParams {
	if !p.HasMore || len(p.Events) == 0 {
		return nil
	}
	next := p.params
	next.Types = slices.Clone(p.params.Types)
	next.After = p.Events[len(p.Events)-1].ID
	return &next
}

// eventPageWire is the data of a page: {"events": [...], "has_more": bool}.
// check parses the events into parsed (pageEvent), and has_more into
// hasMore: kept raw, so that an absent, null or non-boolean has_more is
// told from false. Each event is a slice of the body (dataView), not a copy.
type eventPageWire struct {
	Events  *[]dataView     `json:"events"`
	HasMore json.RawMessage `json:"has_more"`

	parsed  []*Event
	hasMore bool
	// others[i]: event i may have members besides id, event, created_at
	// and data (surprises); nil when none has.
	others []bool
}

// ErrEventPageUnreadable matches the error of ListEventsPage and ListEvents
// when a page does not say, in the assumed way, whether more events follow:
// its has_more is absent, null or not a boolean. The page's events are not
// taken as the end of the list (the service may page another way: another
// cursor field): list with Client.Do and parse each event with ParseEvent.
// The error is also a *MalformedResponseError, with the page's stan.
var ErrEventPageUnreadable = errors.New("payments: the event page does not say whether more events follow")

// pageUnreadable is the reason of a page whose has_more cannot be read.
const pageUnreadable = "the page's has_more is absent, null or not a boolean, so it does not say whether more events follow " +
	"(the service may page another way): its events are not taken as the end of the list; " +
	"list with client.Do and parse each event with payments.ParseEvent"

// checkEventPage parses a page's events with ParseEvent; a page that is not
// one becomes a *MalformedResponseError inside the pipeline. The reason
// never repeats the events' content.
func checkEventPage(out any) string {
	w := out.(*eventPageWire)
	if w.Events == nil {
		return "the page has no events list"
	}
	switch string(bytes.TrimSpace(w.HasMore)) {
	case "true":
		w.hasMore = true
	case "false":
		w.hasMore = false
	default:
		return pageUnreadable
	}
	w.parsed = make([]*Event, 0, len(*w.Events))
	for i, raw := range *w.Events {
		ev, others, err := pageEvent(raw)
		if err != nil {
			return fmt.Sprintf("event %d of the page: %v", i, err)
		}
		if others && w.others == nil {
			w.others = make([]bool, len(*w.Events))
		}
		if others {
			w.others[i] = true
		}
		w.parsed = append(w.parsed, ev)
	}
	if w.hasMore && len(w.parsed) == 0 {
		return "the page says has_more but has no events to continue after"
	}
	return ""
}

// pageEvent is ParseEvent(raw) for an event of a page, in one walk of raw
// and without copying it: raw is a slice of the call's body, its own buffer,
// never reused (as Response.Body and every resource's RawJSON are), and
// already checked as JSON by the envelope's decode. Each member is decoded
// by the method encoding/json calls for it, in order, so the last of a name
// wins, as with ParseEvent; a name encoding/json would match otherwise (in
// another case, escaped, not ASCII) or a value a method refuses goes to
// ParseEvent, whose answer is then the one. TestPageEventIsParseEvent.
// others reports that raw may have members besides id, event, created_at
// and data, which surprise.Event reports.
func pageEvent(raw []byte) (ev *Event, others bool, err error) {
	var w eventWire
	plain := true
	end := surprise.Object(raw, 0, func(name []byte, at int) int {
		end := surprise.Skip(raw, at)
		if end < 0 {
			return -1
		}
		v := raw[at:end]
		others = others || !surprise.EventMember(name)
		var err error
		switch string(name) {
		case "id":
			err = w.ID.UnmarshalJSON(v)
		case "event":
			if k, ok := knownKind(v); ok {
				w.Event = looseString(k)
			} else {
				err = w.Event.UnmarshalJSON(v)
			}
		case "type":
			err = w.Type.UnmarshalJSON(v)
		case "created_at":
			err = w.CreatedAt.UnmarshalJSON(v)
		case "data":
			w.Data = v
		default:
			if !notAnEventMember(name) {
				plain = false
				return -1
			}
		}
		if err != nil {
			plain = false
			return -1
		}
		return end
	})
	if !plain || end != len(raw) {
		ev, err = ParseEvent(raw)
		return ev, true, err
	}
	ev, err = w.event(raw)
	return ev, others, err
}

// knownKind returns the kind the JSON string v names when it is one of the
// EventType constants: the constant, which costs no allocation.
func knownKind(v []byte) (EventType, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	for _, k := range knownKinds {
		if string(v[1:len(v)-1]) == string(k) {
			return k, true
		}
	}
	return "", false
}

var knownKinds = [...]EventType{EventPaymentCompleted, EventPaymentFailed, EventPaymentInitiated, EventPaymentRejected,
	EventVirtualAccountPaymentReceived, EventVirtualAccountCreated, EventVirtualAccountUpdated,
	EventRecipientCreated, EventRecipientVerified, EventRecipientVerificationFailed,
	EventAccountBalanceLow, EventAccountUpdated}

// notAnEventMember reports whether encoding/json matches name to none of
// eventWire's members (name is not one of them as written): plain ASCII,
// no escape, and none of them in another case.
func notAnEventMember(name []byte) bool {
	if bytes.IndexByte(name, '\\') >= 0 || bytes.ContainsFunc(name, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return false
	}
	for _, m := range [...]string{"id", "event", "type", "created_at", "data"} {
		if bytes.EqualFold(name, []byte(m)) {
			return false
		}
	}
	return true
}

var opWebhooksListEvents = &operation{
	Operation: Operation{Name: "webhooks.list_events", Method: http.MethodGet, PathTemplate: "/webhooks/events"}, status: http.StatusOK,
	check: checkEventPage,
}

// ListEventsPage fetches one page of the service's events (GET
// /webhooks/events), oldest first. params may be nil; they are checked
// before anything is sent. The next page is page.NextParams(). ListEvents
// walks every page for you.
//
// The wire format is an assumption (the specification names the operation
// but shows neither its path nor its payload): query after (an event id;
// events created after it), since (RFC 3339, inclusive, on created_at),
// type (repeated) and limit (1 to 100, default 50); data
// {"events": [{"id", "event", "created_at", "data"}, ...], "has_more": bool}.
// A 404 matches ErrListEventsUnavailable; a page whose has_more is absent,
// null or not a boolean matches ErrEventPageUnreadable (never the end of
// the list; test: TestListEventsPageWithoutHasMoreIsAnError). Like every GET it is retried on
// connection errors and on 408, 409, 429, 500, 502, 503 and 504, with no
// Idempotency-Key.
func (s *WebhooksService) ListEventsPage(ctx context.Context, params *EventListParams, opts ...RequestOption) (*EventPage, error) {
	if params == nil {
		params = &EventListParams{}
	}
	if err := params.validate(); err != nil {
		return nil, err
	}
	var w eventPageWire
	r, err := s.client.do(ctx, opWebhooksListEvents, opWebhooksListEvents.PathTemplate+params.query(), nil, &w, opts)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%w: %w", ErrListEventsUnavailable, err)
		}
		var merr *MalformedResponseError
		if errors.As(err, &merr) && merr.Reason == pageUnreadable {
			return nil, fmt.Errorf("%w: %w", ErrEventPageUnreadable, err)
		}
		return nil, err
	}
	page := &EventPage{Events: w.parsed, HasMore: w.hasMore, params: *params}
	page.params.Types = slices.Clone(params.Types)
	page.setResponse(r, nil)
	return page, nil
}

// ListEvents lists the service's events, oldest first, fetching pages (of
// ListEventsPage) as the loop reaches them: a merchant whose receiver was
// down learns what it missed, and can run each event through the same
// function as its webhook handler.
//
//	for ev, err := range client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: checkpoint}) {
//		if err != nil {
//			return err // the events before it were yielded; resume after the last one
//		}
//		... process ev, then checkpoint = ev.ID
//	}
//
// An error (invalid params, a page that failed after its retries, a
// cancelled context, checked before each page so that no further request
// is sent, a page that would continue after an event already continued
// after, matching ErrEventCursorCycle) is yielded once, as (nil, err), and
// ends the loop; the events
// yielded before it stand. Breaking out of the loop sends nothing more.
// The wire format, GET /webhooks/events with after, since, type and limit,
// is an assumption: see ListEventsPage; a 404 matches
// ErrListEventsUnavailable, and a page that does not say whether more
// follow ErrEventPageUnreadable: the loop ends with that error, never
// quietly.
func (s *WebhooksService) ListEvents(ctx context.Context, params *EventListParams, opts ...RequestOption) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		p := params
		if p == nil {
			p = &EventListParams{}
		}
		// The cursors listed after so far: one met again means a cycle.
		seen := map[string]bool{}
		for {
			if p.After != "" {
				seen[p.After] = true
			}
			if err := ctx.Err(); err != nil {
				where := "the first page"
				if p.After != "" {
					where = "the page after event " + p.After
				}
				yield(nil, fmt.Errorf("payments: listing events stopped before %s: %w", where, err))
				return
			}
			page, err := s.ListEventsPage(ctx, p, opts...)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, ev := range page.Events {
				if !yield(ev, nil) {
					return
				}
			}
			next := page.NextParams()
			switch {
			case next == nil:
				return
			case next.After == p.After:
				// A service that answers the same page again would
				// keep this loop going for ever.
				yield(nil, newMalformed("the page does not advance past event "+p.After, page.LastResponse(), ErrEventCursorCycle, s.client.key.raw))
				return
			case seen[next.After]:
				// So would one whose cursors cycle: A, B, A.
				yield(nil, newMalformed("the page after event "+p.After+" ends at event "+next.After+", already listed after",
					page.LastResponse(), ErrEventCursorCycle, s.client.key.raw))
				return
			}
			p = next
		}
	}
}
