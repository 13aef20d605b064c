package paymentstest

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Bounds of a webhook retry schedule (WithWebhook's Retries, the admin API).
const (
	// maxWebhookRetries is how many retries a schedule may have.
	maxWebhookRetries = 20
	// maxWebhookRetryWait is the longest wait before one retry.
	maxWebhookRetryWait = time.Hour
)

// Errors of Redeliver and RedeliverFailed. Match them with errors.Is.
var (
	// errUnknownEvent: no event with this id is in the server's event log
	// (Events), which keeps the last defaultLogLimit events (withLogLimit).
	errUnknownEvent = errors.New("paymentstest: no such event in the event log")
	// errNoWebhookURL: deliveries are off (no URL set with WithWebhook,
	// SetWebhook or SetWebhookURL), so there is nowhere to deliver to.
	errNoWebhookURL = errors.New("paymentstest: no webhook URL is set")
)

// doublingWaits is the schedule of webhookRetryCount retries that starts at
// base and doubles: 1s, 2s, 4s, 8s for a second.
func doublingWaits(base time.Duration) []time.Duration {
	waits := make([]time.Duration, webhookRetryCount)
	for i := range waits {
		waits[i] = base << i
	}
	return waits
}

func checkRetryWaits(waits []time.Duration) error {
	if len(waits) > maxWebhookRetries {
		return fmt.Errorf("%d retries: at most %d", len(waits), maxWebhookRetries)
	}
	for i, w := range waits {
		if w < 0 || w > maxWebhookRetryWait {
			return fmt.Errorf("wait %d (%s) must be from 0 to %s", i+1, w, maxWebhookRetryWait)
		}
	}
	return nil
}

// setWebhookRetries sets the retry schedule of failed deliveries, as
// WithWebhook's Retries does at start: the wait before each retry; none means
// no retry. A delivery keeps the schedule it had at its first attempt; the
// new one applies to deliveries that start after it. It fails, and changes
// nothing, for more than maxWebhookRetries waits or a wait outside 0 to
// maxWebhookRetryWait. The admin API's PUT /_sandbox/webhook-retries calls
// it.
func (s *Server) setWebhookRetries(waits ...time.Duration) error {
	if err := checkRetryWaits(waits); err != nil {
		return errors.New("paymentstest: SetWebhookRetries: " + err.Error())
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	d.retries = slices.Clone(waits)
	return nil
}

// webhookRetryWaits returns the retry schedule of failed deliveries: the
// wait before each retry (by default 1s, 2s, 4s, 8s).
func (s *Server) webhookRetryWaits() []time.Duration {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.retries)
}

// redeliverEvent queues the event with this id for delivery again, to the
// current webhook URL, with the retry schedule, whatever became of its
// earlier deliveries: the same body, so the same event id, which a receiver
// that processed it already must drop as a duplicate. It returns the new
// delivery as queued (Deliveries follows it), errUnknownEvent when the
// event is not in the event log, errNoWebhookURL when deliveries are off,
// and errClosed once Close has started. The admin API's POST
// /_sandbox/events/{id}/redeliver calls it.
func (s *Server) redeliverEvent(id string) (Delivery, error) { return s.redeliverTo(id, "") }

// redeliverTo is Redeliver to url instead of the webhook URL (the webhook
// URL when url is ""), which it leaves as it is: a receiver behind another
// address, or a tunnel, gets the event once. It fails, and queues nothing,
// for a url that is not absolute http or https (even while deliveries are
// off, a url given is enough). The dashboard's Redeliver button, POST
// /_sandbox/events/{id}/redeliver {"url": ...} and "payments events resend
// --to" call it.
func (s *Server) redeliverTo(id, url string) (Delivery, error) {
	if err := checkWebhookURL(url); err != nil {
		return Delivery{}, fmt.Errorf("paymentstest: RedeliverTo: %w", err)
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	configured := url == ""
	urls := []string{url}
	if configured {
		if err := d.canDeliver(); err != nil {
			return Delivery{}, err
		}
		urls = d.urls
	} else if d.ctx.Err() != nil {
		return Delivery{}, errClosed
	}
	var (
		ev    Event
		found bool
	)
	d.events.each(func(_ int, e Event) {
		if e.ID == id {
			ev, found = e, true
		}
	})
	if !found {
		return Delivery{}, errUnknownEvent
	}
	dl := &Delivery{EventID: ev.ID, Event: ev.Type, URL: urls[0], urls: urls, Body: ev.Body, Status: DeliveryPending, CreatedAt: d.now(), Redelivery: true}
	d.enqueue(dl, 0)
	d.logRedelivery(dl, configured)
	return copyDelivery(dl), nil
}

// redeliverFailed queues again, oldest first, every event whose deliveries
// in the log all failed (at least one, none delivered or pending), as
// Redeliver does one, and returns their ids (none: an empty list). An event
// that was never delivered because no URL was set is not among them:
// Redeliver sends it. It returns errNoWebhookURL when deliveries are off and
// errClosed once Close has started. The admin API's POST
// /_sandbox/events/redeliver-failed calls it.
func (s *Server) redeliverFailed() ([]string, error) {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.canDeliver(); err != nil {
		return nil, err
	}
	var (
		order   []string
		last    = map[string]*Delivery{} // an event's latest delivery
		settled = map[string]bool{}      // an event delivered or still pending
	)
	d.deliveries.each(func(_ int, dl *Delivery) {
		if _, seen := last[dl.EventID]; !seen {
			order = append(order, dl.EventID)
		}
		last[dl.EventID] = dl
		if dl.Status != DeliveryFailed {
			settled[dl.EventID] = true
		}
	})
	ids := []string{}
	for _, id := range order {
		if settled[id] {
			continue
		}
		prev := last[id]
		dl := &Delivery{EventID: id, Event: prev.Event, URL: d.urls[0], urls: d.urls, Body: prev.Body, Status: DeliveryPending, CreatedAt: d.now(), Redelivery: true}
		d.enqueue(dl, 0)
		d.logRedelivery(dl, true)
		ids = append(ids, id)
	}
	return ids, nil
}

// canDeliver says why no delivery can be queued now, or nil. d.mu must be
// held.
func (d *dispatcher) canDeliver() error {
	switch {
	case d.ctx.Err() != nil:
		return errClosed
	case len(d.urls) == 0:
		return errNoWebhookURL
	}
	return nil
}

// copyDelivery returns dl with its own copies of the body and attempts.
// The dispatcher's lock must be held.
func copyDelivery(dl *Delivery) Delivery {
	out := *dl
	out.Body = append([]byte(nil), dl.Body...)
	out.Attempts = append([]DeliveryAttempt(nil), dl.Attempts...)
	return out
}
