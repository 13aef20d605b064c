package paymentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

// Paging of GET /webhooks/events, as the SDK assumes it.
const (
	defaultEventPage = 50
	maxEventPage     = 100
)

// eventQuery is a parsed list query.
type eventQuery struct {
	after string
	since time.Time
	types []payments.EventType
	limit int
}

type eventPageJSON struct {
	// Events are webhook bodies, byte for byte: {"id", "event",
	// "created_at", "data"}.
	Events  []json.RawMessage `json:"events"`
	HasMore bool              `json:"has_more"`
}

// listEvents is GET /webhooks/events?after=&since=&type=&limit=: the event
// log, oldest first, a page at a time.
func (s *Server) listEvents(rq *apiRequest) *response {
	q, bad := s.eventQuery(rq.r.URL.RawQuery)
	if bad != nil {
		return bad
	}
	page, found := s.hooks.eventPage(q)
	if !found {
		return s.fail(http.StatusBadRequest, payments.CodeUnknownEventCursor,
			fmt.Sprintf("no event with this id in the log (it keeps the last %d events): list again with since", s.hooks.events.limit),
			fieldProblem{Field: "after", Message: "is not the id of an event in the log"})
	}
	data, err := json.Marshal(page)
	if err != nil {
		return s.internal(err)
	}
	return s.ok(http.StatusOK, fmt.Sprintf("%d events", len(page.Events)), data)
}

// eventQuery reads the list's query, naming every bad parameter at once
// (422); an unknown parameter is refused, so that a typo does not list
// everything.
func (s *Server) eventQuery(raw string) (eventQuery, *response) {
	q := eventQuery{limit: defaultEventPage}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return q, s.invalid(problems{{Field: "query", Message: "is not a valid URL query"}})
	}
	var p problems
	known := []string{"after", "since", "type", "limit"}
	var names []string
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case !slices.Contains(known, name):
			p.add(name, "is not a parameter of this request (known: %s)", strings.Join(known, ", "))
		case name != "type" && len(values[name]) > 1:
			p.add(name, "is given more than once")
		}
	}
	if v, ok := values["after"]; ok {
		q.after = v[0]
		if strings.TrimSpace(q.after) == "" {
			p.add("after", "must be the id of an event")
		}
	}
	if v, ok := values["since"]; ok {
		t, err := time.Parse(time.RFC3339, v[0])
		if err != nil {
			p.add("since", "must be an RFC 3339 time such as 2025-01-31T09:00:00Z")
		}
		q.since = t
	}
	if v, ok := values["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxEventPage || v[0] != strconv.Itoa(n) {
			p.add("limit", "must be a whole number from 1 to %d", maxEventPage)
		}
		q.limit = n
	}
	for _, v := range values["type"] {
		t := payments.EventType(v)
		if !eventkind.Known(t) {
			p.add("type", "must be one of %s", strings.Join(eventNames(), ", "))
			break
		}
		q.types = append(q.types, t)
	}
	if len(p) > 0 {
		return q, s.invalid(p)
	}
	return q, nil
}

// eventNames lists the specification's event kinds.
func eventNames() []string {
	var names []string
	for _, k := range eventkind.All() {
		names = append(names, string(k))
	}
	return names
}

// eventPage selects a page of the event log; found is false when q.after
// names no event in it.
func (d *dispatcher) eventPage(q eventQuery) (page eventPageJSON, found bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	found = q.after == ""
	page.Events = []json.RawMessage{}
	d.events.each(func(_ int, ev Event) {
		switch {
		case !found:
			found = ev.ID == q.after
			return
		case page.HasMore:
			return
		// created_at is sent to the millisecond: since compares with
		// what the client saw.
		case !q.since.IsZero() && ev.CreatedAt.Truncate(time.Millisecond).Before(q.since):
			return
		case len(q.types) > 0 && !slices.Contains(q.types, ev.Type):
			return
		case len(page.Events) == q.limit:
			page.HasMore = true
			return
		}
		page.Events = append(page.Events, append(json.RawMessage(nil), ev.Body...))
	})
	return page, found
}
