package paymentstest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
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
	// schedule (WithWebhookRetries; WebhookRetries by default) failed.
	DeliveryFailed DeliveryStatus = "failed"
)

// Delivery is the log of one event sent to the webhook URL.
type Delivery struct {
	EventID string
	Event   payments.EventType
	URL     string
	// Body is the request body of every attempt, byte for byte.
	Body     []byte
	Status   DeliveryStatus
	Attempts []DeliveryAttempt
	// CreatedAt is when the delivery was queued: the event's time, or the
	// time of Redeliver or RedeliverFailed.
	CreatedAt time.Time
	// Redelivery is true for a delivery queued by Redeliver or
	// RedeliverFailed: the same body, so the same event id, as the first.
	Redelivery bool
}

// DeliveryAttempt is one POST of a delivery.
type DeliveryAttempt struct {
	// At is the server's time of the attempt (Server.Now: business time,
	// moved by Advance and WithClock), like every other time in the
	// server's logs. The signature's t is not At but the wall-clock time
	// of sending (time.Now), which a receiver checks against its own
	// clock.
	At time.Time
	// StatusCode is the receiver's answer, or 0 when there was none.
	StatusCode int
	// Error is the connection error, when there was one.
	Error string
	// Scheme is how the attempt was signed (see WithWebhookScheme).
	Scheme WebhookScheme
	// Signature is the signature header sent: Payments-Signature under
	// SchemePayments, webhook-signature under SchemeStandard (whose
	// webhook-id is the delivery's EventID).
	Signature string
	// Duration is how long the attempt took (wall clock).
	Duration time.Duration
}

// dispatcher sends webhook deliveries, one at a time and in the order the
// events occurred, from a single goroutine that Close stops.
type dispatcher struct {
	client    *http.Client
	transport *http.Transport
	now       func() time.Time // the server's clock: the log's times
	wall      func() time.Time // time.Now: signatures and durations
	logger    *slog.Logger
	ctx       context.Context
	cancel    context.CancelFunc
	stopped   chan struct{}
	wake      chan struct{}

	mu         sync.Mutex
	url        string
	scheme     WebhookScheme
	secrets    []string
	retries    []time.Duration // the wait before each retry of a delivery
	events     ring[Event]
	deliveries ring[*Delivery]
	queue      []*Delivery
	busy       bool
	scheduled  int           // late work that will send events (later.go)
	changed    chan struct{} // closed and replaced on every change
}

func newDispatcher(cfg *config, now func() time.Time, logger *slog.Logger) *dispatcher {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	d := &dispatcher{
		transport: tr,
		client: &http.Client{
			Transport: tr,
			Timeout:   cfg.webhookTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		now:     now,
		wall:    time.Now,
		logger:  logger,
		stopped: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		url:     cfg.webhookURL,
		scheme:  cfg.webhookScheme,
		secrets: cfg.webhookSecrets,
		retries: cfg.webhookRetries,
		changed: make(chan struct{}),

		events:     newRing[Event](cfg.logLimit),
		deliveries: newRing[*Delivery](cfg.logLimit),
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.run()
	return d
}

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

// SetWebhook sets the URL that deliveries go to and the signing secrets,
// replacing those of WithWebhook; the scheme stays (SetWebhookScheme
// changes it). An empty url stops sending new events (deliveries already
// queued still go out). Under SchemePayments, without secrets the signature
// header carries only "t=...", which a receiver must refuse: a way to test
// that it does. Under SchemeStandard the secrets must be whsec_ secrets,
// and without any the server makes a new one (WebhookSecrets), so a
// receiver that kept the old one refuses the deliveries. It fails, and
// changes nothing, for a URL that is not absolute http or https or a secret
// the scheme cannot use.
func (s *Server) SetWebhook(url string, secrets ...string) error {
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
	d.url, d.secrets = url, secrets
	return nil
}

// SetWebhookURL changes where deliveries go, keeping the signing secrets,
// like pointing the dashboard's webhook URL somewhere else (a receiver on
// your machine, a tunnel). An empty url stops sending new events; events
// already queued still go to the URL they were queued for. It fails, and
// changes nothing, for a URL that is not absolute http or https. The
// admin API's PUT /_sandbox/webhook-url calls it.
func (s *Server) SetWebhookURL(url string) error {
	if err := checkWebhookURL(url); err != nil {
		return errors.New("paymentstest: SetWebhookURL: " + err.Error())
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	d.url = url
	return nil
}

// WebhookURL returns the URL that new events are delivered to, or "" when
// deliveries are off.
func (s *Server) WebhookURL() string {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url
}

// notify wakes WaitForDeliveries. d.mu must be held.
func (d *dispatcher) notify() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// publish records an event and queues its delivery when a webhook URL is set.
func (d *dispatcher) publish(ev Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events.add(ev)
	if d.url == "" || d.ctx.Err() != nil {
		return
	}
	d.enqueue(&Delivery{EventID: ev.ID, Event: ev.Type, URL: d.url, Body: ev.Body, Status: DeliveryPending, CreatedAt: ev.CreatedAt})
}

// enqueue logs a delivery and queues it. d.mu must be held.
func (d *dispatcher) enqueue(dl *Delivery) {
	d.deliveries.add(dl)
	d.queue = append(d.queue, dl)
	d.notify()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) run() {
	defer close(d.stopped)
	for {
		dl := d.next()
		if dl == nil {
			return
		}
		d.deliver(dl)
		d.mu.Lock()
		d.busy = false
		d.notify()
		d.mu.Unlock()
	}
}

// next takes the oldest queued delivery, waiting for one; nil means stop.
func (d *dispatcher) next() *Delivery {
	for {
		d.mu.Lock()
		if len(d.queue) > 0 && d.ctx.Err() == nil {
			dl := d.queue[0]
			d.queue[0] = nil
			d.queue = d.queue[1:]
			d.busy = true
			d.mu.Unlock()
			return dl
		}
		d.mu.Unlock()
		select {
		case <-d.wake:
		case <-d.ctx.Done():
			return nil
		}
	}
}

// deliver makes the first attempt and a retry after each wait of the retry
// schedule, as it was when the first attempt started.
func (d *dispatcher) deliver(dl *Delivery) {
	d.mu.Lock()
	waits := d.retries
	d.mu.Unlock()
	for attempt := 0; attempt <= len(waits); attempt++ {
		if attempt > 0 {
			if !d.sleep(waits[attempt-1]) {
				return // closing: the delivery stays pending
			}
		}
		a := d.attempt(dl)
		ok := a.StatusCode >= 200 && a.StatusCode <= 299
		d.mu.Lock()
		dl.Attempts = append(dl.Attempts, a)
		switch {
		case ok:
			dl.Status = DeliveryDelivered
		case attempt == len(waits):
			dl.Status = DeliveryFailed
		}
		d.notify()
		d.mu.Unlock()
		if ok || d.ctx.Err() != nil {
			return
		}
	}
}

func (d *dispatcher) sleep(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.ctx.Done():
		return false
	}
}

func (d *dispatcher) attempt(dl *Delivery) DeliveryAttempt {
	d.mu.Lock()
	scheme, secrets := d.scheme, d.secrets
	d.mu.Unlock()
	a := DeliveryAttempt{At: d.now(), Scheme: scheme}
	start := d.wall()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Body))
	if err != nil {
		a.Error = err.Error()
		return a
	}
	// Signed on the wall clock, not the business clock: a receiver
	// verifies the timestamp against its own clock, and Advance must not
	// make every delivery fail (see DeliveryAttempt.At). Under
	// SchemeStandard the event's id is the webhook-id of every attempt.
	sig, signature, err := signDelivery(scheme, dl.EventID, start, dl.Body, secrets)
	if err != nil { // the secrets were checked when set: cannot happen
		a.Error = "signing the delivery: " + err.Error()
		return a
	}
	a.Signature = signature
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payments-go-paymentstest/"+payments.Version)
	for name, values := range sig {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		a.Error = err.Error()
	} else {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		a.StatusCode = resp.StatusCode
	}
	a.Duration = d.wall().Sub(start)
	if d.logger != nil {
		d.logger.LogAttrs(d.ctx, slog.LevelInfo, "paymentstest: webhook attempt",
			slog.String("event_id", dl.EventID), slog.String("event", string(dl.Event)), slog.String("scheme", string(a.Scheme)),
			slog.Int("status", a.StatusCode), slog.String("error", a.Error), slog.Duration("duration", a.Duration))
	}
	return a
}

// close stops the delivery goroutine and waits for it.
func (d *dispatcher) close() {
	d.cancel()
	<-d.stopped
	d.transport.CloseIdleConnections()
}

// Deliveries returns the webhook delivery log, oldest first: one entry per
// event sent to the webhook URL, with every attempt; the last
// DefaultLogLimit of them, or as many as WithLogLimit says.
func (s *Server) Deliveries() []Delivery {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Delivery, d.deliveries.len())
	d.deliveries.each(func(i int, dl *Delivery) { out[i] = copyDelivery(dl) })
	return out
}

// WaitForDeliveries blocks until every queued delivery is delivered or has
// failed all its attempts, and the late work of the test values (a late
// verification or payment, see WithProcessingDelay) has sent its events.
// It returns ctx's error if ctx ends first, and ErrClosed if the server
// closes with deliveries still pending.
func (s *Server) WaitForDeliveries(ctx context.Context) error {
	d := s.hooks
	for {
		d.mu.Lock()
		if len(d.queue) == 0 && !d.busy && d.scheduled == 0 {
			d.mu.Unlock()
			return nil
		}
		ch := d.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-d.stopped:
			return ErrClosed
		}
	}
}
