package paymentstest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// DeliveryStatus is the state of a webhook delivery.
type DeliveryStatus string

// Delivery states.
const (
	// DeliveryPending: not yet attempted, being retried, or cut short by
	// Close.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: an attempt got a 2xx answer.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed: the first attempt and every retry of the retry
	// schedule (Webhook.Retries; 4 retries by default) failed.
	DeliveryFailed DeliveryStatus = "failed"
)

// Delivery is the log of one event sent to the webhook URL.
type Delivery struct {
	EventID string
	Event   payments.EventType
	// URL is where the delivery's latest attempt went, or where its first
	// goes. With several webhook URLs (Webhook.URLs), first attempts take
	// them in turn, round robin, and each retry goes to the URL after the
	// one its previous attempt went to (DeliveryAttempt.URL says where each
	// went).
	URL string
	// Body is the request body of every attempt, byte for byte.
	Body     []byte
	Status   DeliveryStatus
	Attempts []DeliveryAttempt
	// CreatedAt is when the delivery was queued: the event's time, or the
	// time it was asked for again (the admin API's redeliver routes).
	CreatedAt time.Time
	// Redelivery is true for a delivery asked for again: the same body, so
	// the same event id, as the first.
	Redelivery bool
	// NextAttemptAt is the server's time (Now) of the next attempt while
	// the delivery is pending and waiting for a retry (or, with
	// Sandbox.DeliveryDelay, for its first attempt); zero otherwise.
	NextAttemptAt time.Time

	seq   uint64          // the order the delivery was queued in
	urls  []string        // the receivers it may go to, as set when it was queued
	turn  int             // which of them its latest attempt went to
	waits []time.Duration // its retry schedule, taken at its first attempt
	due   time.Time       // wall-clock time of its next attempt
}

// DeliveryAttempt is one POST of a delivery.
type DeliveryAttempt struct {
	// At is the server's time of the attempt (Server.Now: business time,
	// moved by Advance), like every other time in the
	// server's logs. The signature's t is not At but the wall-clock time
	// of sending (time.Now), which a receiver checks against its own
	// clock.
	At time.Time
	// URL is the receiver the attempt went to.
	URL string
	// StatusCode is the receiver's answer, or 0 when there was none.
	StatusCode int
	// Error is the connection error, when there was one.
	Error string
	// Scheme is how the attempt was signed (see Webhook.Scheme).
	Scheme WebhookScheme
	// Signature is the signature header sent: Payments-Signature under
	// SchemePayments, webhook-signature under SchemeStandard (whose
	// webhook-id is the delivery's EventID).
	Signature string
	// Duration is how long the attempt took (wall clock).
	Duration time.Duration
	// ResponseBody is the first responseBodyLimit bytes of the receiver's
	// answer, as text (invalid UTF-8 replaced), for the dashboard and the
	// admin API.
	ResponseBody string
	// ResponseHeader holds the receiver's response headers (at most 32
	// values, each cut to 256 bytes), nil after a connection error.
	ResponseHeader http.Header
}

// responseBodyLimit is how much of a receiver's answer DeliveryAttempt
// keeps.
const responseBodyLimit = 512

func checkWebhookURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return errors.New("the webhook URL must be an absolute http or https URL, such as http://localhost:8080/webhooks")
	}
	return nil
}

// maxWebhookURLs bounds the receivers deliveries go round robin over.
const maxWebhookURLs = 16

// checkWebhookURLs checks a list of receivers: none turns deliveries off.
func checkWebhookURLs(urls []string) error {
	if len(urls) > maxWebhookURLs {
		return fmt.Errorf("the webhook URLs are %d, more than %d", len(urls), maxWebhookURLs)
	}
	for _, u := range urls {
		if u == "" {
			return errors.New("the webhook URLs hold an empty one: give absolute http or https URLs, such as http://localhost:8081/webhooks")
		}
		if err := checkWebhookURL(u); err != nil {
			return fmt.Errorf("%q: %w", u, err)
		}
	}
	return nil
}

// splitWebhookURLs reads a comma-separated list of webhook URLs, as the
// dashboard's form and the sandbox's -webhook-url flag take them: "" is
// none.
func splitWebhookURLs(s string) []string {
	var urls []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// setWebhook sets the URL that deliveries go to and the signing secrets,
// replacing those of WithWebhook; the scheme stays (SetWebhookScheme
// changes it). An empty url stops sending new events (deliveries already
// queued still go out). Under SchemePayments, without secrets the signature
// header carries only "t=...", which a receiver must refuse: a way to test
// that it does. Under SchemeStandard the secrets must be whsec_ secrets,
// and without any the server makes a new one (WebhookSecrets), so a
// receiver that kept the old one refuses the deliveries. It fails, and
// changes nothing, for a URL that is not absolute http or https or a secret
// the scheme cannot use.
func (s *Server) setWebhook(url string, secrets ...string) error {
	if err := checkWebhookURL(url); err != nil {
		return errors.New("paymentstest: SetWebhook: " + err.Error())
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	secrets, err := schemeSecrets(d.scheme, secrets)
	if err != nil {
		return errors.New("paymentstest: SetWebhook: " + err.Error())
	}
	d.urls, d.secrets = nil, secrets
	if url != "" {
		d.urls = []string{url}
	}
	return nil
}

// setWebhookURL changes where deliveries go, keeping the signing secrets,
// like pointing the dashboard's webhook URL somewhere else (a receiver on
// your machine, a tunnel). An empty url stops sending new events; events
// already queued still go to the URL they were queued for. It fails, and
// changes nothing, for a URL that is not absolute http or https. The
// admin API's PUT /_sandbox/webhook-url calls it.
func (s *Server) setWebhookURL(url string) error {
	if url == "" {
		return s.setWebhookURLs(nil)
	}
	return s.setWebhookURLs([]string{url})
}

// setWebhookURLs is setWebhookURL for several receivers: new events go
// to them round robin (see Delivery.URL); none turns deliveries off.
func (s *Server) setWebhookURLs(urls []string) error {
	if err := checkWebhookURLs(urls); err != nil {
		return errors.New("paymentstest: SetWebhookURL: " + err.Error())
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	d.urls, d.turn = slices.Clone(urls), 0
	return nil
}

// webhookURLValue returns the URLs that new events are delivered to,
// comma-separated, or "" when deliveries are off.
func (s *Server) webhookURLValue() string {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.urls, ",")
}

// notify wakes WaitForDeliveries. d.mu must be held.
func (d *dispatcher) notify() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Deliveries returns the webhook delivery log, oldest first: one entry per
// event sent to the webhook URL, with every attempt; the last
// 10,000 of them, or as many as Sandbox.LogLimit says.
func (s *Server) Deliveries() []Delivery {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Delivery, d.deliveries.len())
	d.deliveries.each(func(i int, dl *Delivery) { out[i] = copyDelivery(dl) })
	return out
}
