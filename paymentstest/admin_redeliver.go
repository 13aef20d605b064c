package paymentstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// The admin routes that send events again and set the retry schedule.

// Retry schedule.

type adminRetriesJSON struct {
	// Retries is how many retries follow a failed first attempt.
	Retries int `json:"retries"`
	// Waits are the waits before each retry, as Go durations ("1s").
	Waits []string `json:"waits"`
	// WaitsSeconds are the same waits in seconds.
	WaitsSeconds []float64 `json:"waits_seconds"`
}

func (s *Server) retriesJSON() adminRetriesJSON {
	waits := s.webhookRetryWaits()
	out := adminRetriesJSON{Retries: len(waits), Waits: make([]string, len(waits)), WaitsSeconds: make([]float64, len(waits))}
	for i, w := range waits {
		out.Waits[i], out.WaitsSeconds[i] = w.String(), w.Seconds()
	}
	return out
}

// adminWebhookRetries is GET /_sandbox/webhook-retries.
func (s *Server) adminWebhookRetries(*apiRequest) *response {
	return s.adminOK("Webhook retry schedule", s.retriesJSON())
}

// adminSetWebhookRetries is PUT /_sandbox/webhook-retries
// {"waits": ["1s", "2s", 4, 8]}: SetWebhookRetries. A wait is a Go duration
// in a string, or a number of seconds; [] means no retry.
func (s *Server) adminSetWebhookRetries(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("waits")
	var items []json.RawMessage
	switch {
	case !o.present("waits"):
		p.add("waits", `is required: a list of waits such as ["1s", "2s", "4s", "8s"], or [] for no retry`)
	case json.Unmarshal(o.m["waits"], &items) != nil:
		p.add("waits", `must be a list of waits such as ["1s", "2s", "4s", "8s"]`)
	case len(items) > maxWebhookRetries:
		p.add("waits", "has %d waits: at most %d", len(items), maxWebhookRetries)
		items = nil
	}
	waits := make([]time.Duration, 0, len(items))
	for i, raw := range items {
		field := fmt.Sprintf("waits[%d]", i)
		var text string
		if json.Unmarshal(raw, &text) == nil {
			w, err := time.ParseDuration(strings.TrimSpace(text))
			if err != nil || w < 0 || w > maxWebhookRetryWait {
				p.add(field, "must be a Go duration from 0s to %s, such as \"1s\" or \"500ms\"", maxWebhookRetryWait)
			}
			waits = append(waits, w)
			continue
		}
		item := &object{m: map[string]json.RawMessage{field: raw}, p: p, notes: &rq.notes}
		w, _ := item.seconds(field, 0, maxWebhookRetryWait)
		waits = append(waits, w)
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	if err := s.setWebhookRetries(waits...); err != nil { // checked above: cannot happen
		return s.invalid(problems{{Field: "waits", Message: err.Error()}})
	}
	return s.adminOK("Webhook retry schedule set", s.retriesJSON())
}

// Redelivery.

type adminRedeliveredJSON struct {
	// EventIDs are the events queued again, oldest first.
	EventIDs []string `json:"event_ids"`
}

// redeliverFailure answers an error of Redeliver or RedeliverFailed.
func (s *Server) redeliverFailure(err error, id string) *response {
	switch {
	case errors.Is(err, errUnknownEvent):
		return s.notFound(fmt.Sprintf("event %q", id))
	case errors.Is(err, errNoWebhookURL):
		return s.fail(http.StatusUnprocessableEntity, payments.CodeWebhookNotConfigured,
			"no webhook URL is set: PUT "+adminPrefix+"webhook-url first")
	case errors.Is(err, errClosed):
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	}
	return s.internal(err)
}

// adminRedeliverFailed is POST /_sandbox/events/redeliver-failed:
// RedeliverFailed; data {"event_ids"}.
func (s *Server) adminRedeliverFailed(rq *apiRequest) *response {
	if bad := s.adminNoFields(rq); bad != nil {
		return bad
	}
	ids, err := s.redeliverFailed()
	if err != nil {
		return s.redeliverFailure(err, "")
	}
	return s.adminOK(fmt.Sprintf("%d failed events queued for delivery again", len(ids)), adminRedeliveredJSON{EventIDs: ids})
}

// adminNoFields refuses a body with any member (an empty one, or {}, is
// fine): these routes take none.
func (s *Server) adminNoFields(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, true)
	if bad != nil {
		return bad
	}
	for name := range o.m {
		p.add(name, "is not a field: this request takes no body")
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	return nil
}
