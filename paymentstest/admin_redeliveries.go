package paymentstest

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The log of redeliveries asked for (Redeliver, RedeliverTo,
// RedeliverFailed: the dashboard's button, the admin API, "payments events
// resend"), which "payments listen" follows so that it forwards a
// redelivery to its receiver like a first delivery.

// redelivery is one entry of the log.
type redelivery struct {
	Seq       int64
	EventID   string
	Event     string
	URL       string
	CreatedAt time.Time
	Body      []byte
	// Configured is true when it went to the webhook URL (not to another
	// URL given to RedeliverTo).
	Configured bool
}

// logRedelivery records a redelivery just queued. d.mu must be held.
func (d *dispatcher) logRedelivery(dl *Delivery, configured bool) {
	d.redeliverySeq++
	d.redeliveries.add(redelivery{Seq: d.redeliverySeq, EventID: dl.EventID, Event: string(dl.Event), URL: dl.URL,
		CreatedAt: dl.CreatedAt, Body: dl.Body, Configured: configured})
}

type adminRedeliveryJSON struct {
	Seq       int64           `json:"seq"`
	EventID   string          `json:"event_id"`
	Event     string          `json:"event"`
	URL       string          `json:"url"`
	CreatedAt string          `json:"created_at"`
	Body      json.RawMessage `json:"body"`
	// ToWebhookURL is true when it went to the webhook URL, false when
	// to another URL (RedeliverTo, "payments events resend --to").
	ToWebhookURL bool `json:"to_webhook_url"`
}

type adminRedeliveriesJSON struct {
	// LastSeq is the seq of the latest redelivery (0: none yet): the after
	// of the next request.
	LastSeq      int64                 `json:"last_seq"`
	Redeliveries []adminRedeliveryJSON `json:"redeliveries"`
}

// adminRedeliveries is GET /_sandbox/redeliveries?after=SEQ: the
// redeliveries asked for after SEQ, oldest first (the log keeps the last
// defaultLogLimit); without after, none, and the last seq to start from.
func (s *Server) adminRedeliveries(rq *apiRequest) *response {
	q := rq.r.URL.Query()
	after, all := int64(0), false
	if v := strings.TrimSpace(q.Get("after")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return s.invalid(problems{{Field: "after", Message: "must be a seq: 0 or more"}})
		}
		after, all = n, true
	}
	d := s.hooks
	d.mu.Lock()
	out := adminRedeliveriesJSON{LastSeq: d.redeliverySeq, Redeliveries: []adminRedeliveryJSON{}}
	if all {
		d.redeliveries.each(func(_ int, r redelivery) {
			if r.Seq > after {
				out.Redeliveries = append(out.Redeliveries, adminRedeliveryJSON{Seq: r.Seq, EventID: r.EventID, Event: r.Event,
					URL: r.URL, CreatedAt: stamp(r.CreatedAt), Body: append(json.RawMessage(nil), r.Body...), ToWebhookURL: r.Configured})
			}
		})
	}
	d.mu.Unlock()
	return s.adminOK("Redeliveries", out)
}
