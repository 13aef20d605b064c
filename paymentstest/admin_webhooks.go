package paymentstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// The admin routes about webhooks: where deliveries go, and their log.

// Webhook URL.

type adminWebhookURLJSON struct {
	// URL is where deliveries go, the first of URLs; "" when they are off.
	URL string `json:"url"`
	// URLs are the receivers deliveries go to round robin: [URL] with one.
	URLs []string `json:"urls"`
	// Scheme is how deliveries are signed: "payments" or "standard". The
	// secrets are never shown.
	Scheme WebhookScheme `json:"scheme"`
}

// webhookSetting is the data of the webhook-url routes.
func (s *Server) webhookSetting() adminWebhookURLJSON {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	out := adminWebhookURLJSON{URLs: append([]string{}, d.urls...), Scheme: d.scheme}
	if len(d.urls) > 0 {
		out.URL = d.urls[0]
	}
	return out
}

// adminWebhookURL is GET /_sandbox/webhook-url.
func (s *Server) adminWebhookURL(*apiRequest) *response {
	return s.adminOK("Webhook URL", s.webhookSetting())
}

// adminSetWebhookURL is PUT /_sandbox/webhook-url {"url": "..."}, or
// {"urls": ["...", ...]} for several receivers, which deliveries then go
// to round robin: setWebhookURLs; "" or [] turns deliveries off.
func (s *Server) adminSetWebhookURL(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("url", "urls")
	var urls []string
	switch {
	case o.present("url") && o.present("urls"):
		p.add("urls", `give "url" or "urls", not both`)
	case o.present("urls"):
		if err := json.Unmarshal(o.m["urls"], &urls); err != nil {
			p.add("urls", "must be a list of strings")
		}
		for i := range urls {
			urls[i] = strings.TrimSpace(urls[i])
		}
		if err := checkWebhookURLs(urls); err != nil {
			p.add("urls", "%s", err.Error())
		}
	case o.present("url"):
		u := strings.TrimSpace(o.text("url", maxTextLen))
		if err := checkWebhookURL(u); err != nil {
			p.add("url", "%s", strings.TrimPrefix(err.Error(), "the webhook URL "))
		}
		if u != "" {
			urls = []string{u}
		}
	default:
		p.add("url", `is required: an absolute http or https URL, or "" to turn deliveries off (or "urls": a list of them, for round robin)`)
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	if err := s.setWebhookURLs(urls); err != nil { // checked above: cannot happen
		return s.invalid(problems{{Field: "urls", Message: err.Error()}})
	}
	msg := "Webhook URL set"
	switch {
	case len(urls) == 0:
		msg = "Webhook deliveries turned off"
	case len(urls) > 1:
		msg = "Webhook URLs set: deliveries go round robin"
	}
	return s.adminOK(msg, s.webhookSetting())
}

// Webhook deliveries.

type adminAttemptJSON struct {
	At         string `json:"at"`
	URL        string `json:"url"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error,omitempty"`
	Scheme     string `json:"scheme"`
	Signature  string `json:"signature"`
	DurationMS int64  `json:"duration_ms"`
	// ResponseHeaders are the receiver's response headers.
	ResponseHeaders http.Header `json:"response_headers,omitempty"`
}

type adminDeliveryJSON struct {
	EventID   string             `json:"event_id"`
	Event     string             `json:"event"`
	URL       string             `json:"url"`
	Status    DeliveryStatus     `json:"status"`
	CreatedAt string             `json:"created_at"`
	Attempts  []adminAttemptJSON `json:"attempts"`
	// Body is the webhook body sent: {"id", "event", "created_at", "data"}.
	Body json.RawMessage `json:"body"`
	// Redelivery is true for a delivery queued by Redeliver or
	// RedeliverFailed.
	Redelivery bool `json:"redelivery,omitempty"`
}

type adminDeliveriesJSON struct {
	// Pending counts deliveries not yet delivered or failed.
	Pending int `json:"pending"`
	// Paused is true between POST /_sandbox/deliveries/pause and resume.
	Paused     bool                `json:"paused"`
	Deliveries []adminDeliveryJSON `json:"deliveries"`
}

func (s *Server) deliveriesJSON() adminDeliveriesJSON {
	log := s.Deliveries()
	out := adminDeliveriesJSON{Deliveries: make([]adminDeliveryJSON, len(log)), Paused: s.deliveriesPaused()}
	for i, dl := range log {
		if dl.Status == DeliveryPending {
			out.Pending++
		}
		out.Deliveries[i] = deliveryJSON(dl)
	}
	return out
}

// deliveryJSON is a delivery as the admin API shows it.
func deliveryJSON(dl Delivery) adminDeliveryJSON {
	body := json.RawMessage(dl.Body)
	if !json.Valid(body) { // the server's own JSON: cannot happen
		body, _ = json.Marshal(string(dl.Body))
	}
	d := adminDeliveryJSON{
		EventID: dl.EventID, Event: string(dl.Event), URL: dl.URL, Status: dl.Status,
		CreatedAt: stamp(dl.CreatedAt), Attempts: make([]adminAttemptJSON, len(dl.Attempts)), Body: body,
		Redelivery: dl.Redelivery,
	}
	for j, a := range dl.Attempts {
		d.Attempts[j] = adminAttemptJSON{
			At: stamp(a.At), URL: a.URL, StatusCode: a.StatusCode, Error: a.Error, Scheme: string(a.Scheme), Signature: a.Signature,
			DurationMS: a.Duration.Milliseconds(), ResponseHeaders: a.ResponseHeader,
		}
	}
	return d
}

// adminDeliveries is GET /_sandbox/deliveries.
func (s *Server) adminDeliveries(*apiRequest) *response {
	return s.adminOK("Webhook deliveries", s.deliveriesJSON())
}

// adminWaitDeliveries is POST /_sandbox/deliveries/wait
// {"timeout_seconds": 10}: WaitForDeliveries, bounded.
func (s *Server) adminWaitDeliveries(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, true)
	if bad != nil {
		return bad
	}
	o.only("timeout_seconds")
	timeout := defaultAdminWait
	if d, ok := o.seconds("timeout_seconds", 0, maxAdminWait); ok {
		if d <= 0 {
			p.add("timeout_seconds", "must be positive")
		}
		timeout = d
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	ctx, cancel := context.WithTimeout(rq.r.Context(), timeout)
	defer cancel()
	s.extendWrite(rq.w, timeout)
	err := s.WaitForDeliveries(ctx)
	switch {
	case err == nil:
		return s.adminOK("Webhook deliveries done", s.deliveriesJSON())
	case errors.Is(err, errClosed):
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	case rq.r.Context().Err() != nil:
		return nil // the client went away
	}
	data, err := json.Marshal(s.deliveriesJSON())
	if err != nil {
		return s.internal(err)
	}
	return newEnvelope(envelopeJSON{
		Message: fmt.Sprintf("deliveries still pending after %s", timeout),
		Code:    codeDeliveryPending,
		Data:    data,
	}, http.StatusGatewayTimeout, s.ids.uuid())
}
