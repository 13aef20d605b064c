package paymentstest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// defaultWebhookConcurrency is how many delivery attempts are in flight at
// once unless withWebhookConcurrency says otherwise: one, so that first
// attempts go out in the order the events occurred, while each retry waits
// on its own schedule without holding anything up
// (TestDeliveriesPauseAndResume, TestDeliveriesFailingEventDoesNotHoldUpTheNext).
const defaultWebhookConcurrency = 1

// dispatcher sends webhook deliveries. Each delivery has its own schedule:
// its first attempt is due when it is queued, each retry when its wait has
// passed, and a scheduler goroutine starts the attempts that are due, in
// the order they became due, at most concurrency at a time. A delivery
// waiting for a retry holds no slot, so a receiver that fails one event
// never holds up the next (TestDeliveriesFailingEventDoesNotHoldUpTheNext).
type dispatcher struct {
	client      *http.Client
	transport   *http.Transport
	now         func() time.Time // the server's clock: the log's times
	wall        func() time.Time // time.Now: signatures, durations and due times
	logger      *slog.Logger
	ctx         context.Context
	cancel      context.CancelFunc
	stopped     chan struct{} // closed when the scheduler and every attempt are done
	wake        chan struct{}
	concurrency int
	attempts    sync.WaitGroup
	differences differences // WithDifferences': the signature's header

	mu         sync.Mutex
	urls       []string // the receivers, taken in turn; none: deliveries off (never changed in place)
	turn       int      // the receiver of the next first attempt
	scheme     WebhookScheme
	secrets    []string
	retries    []time.Duration // the wait before each retry of a delivery
	chaos      deliveryChaos
	paused     bool
	events     ring[Event]
	deliveries ring[*Delivery]
	waiting    []*Delivery // pending deliveries not being attempted
	running    int         // attempts in flight
	pending    int         // deliveries neither delivered nor failed
	seq        uint64
	scheduled  int // late work that will send events (later.go)

	redeliveries  ring[redelivery] // admin_redeliveries.go
	redeliverySeq int64
	changed       chan struct{} // closed and replaced on every change
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
		now:         now,
		wall:        time.Now,
		logger:      logger,
		stopped:     make(chan struct{}),
		wake:        make(chan struct{}, 1),
		concurrency: cfg.webhookConcurrency,
		differences: cfg.differences,
		urls:        cfg.webhookURLs,
		scheme:      cfg.webhookScheme,
		secrets:     cfg.webhookSecrets,
		retries:     cfg.webhookRetries,
		chaos:       cfg.chaos,
		changed:     make(chan struct{}),

		events:     newRing[Event](cfg.logLimit),
		deliveries: newRing[*Delivery](cfg.logLimit),

		redeliveries: newRing[redelivery](cfg.logLimit),
	}
	if d.concurrency < 1 {
		d.concurrency = defaultWebhookConcurrency
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.run()
	return d
}

// publish records an event and queues its delivery when a webhook URL is
// set (twice under deliveryChaos.Duplicate).
func (d *dispatcher) publish(ev Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events.add(ev)
	if len(d.urls) == 0 || d.ctx.Err() != nil {
		return
	}
	copies := 1
	if d.chaos.Duplicate {
		copies = 2
	}
	for i := 0; i < copies; i++ {
		d.enqueue(&Delivery{EventID: ev.ID, Event: ev.Type, URL: d.urls[0], urls: d.urls, Body: ev.Body, Status: DeliveryPending,
			CreatedAt: ev.CreatedAt, Redelivery: i > 0}, d.chaos.Delay)
	}
}

// enqueue logs a delivery and queues it, its first attempt due after
// delay. d.mu must be held.
func (d *dispatcher) enqueue(dl *Delivery, delay time.Duration) {
	d.seq++
	dl.seq, dl.due = d.seq, d.wall().Add(delay)
	if delay > 0 {
		dl.NextAttemptAt = d.now().Add(delay)
	}
	d.deliveries.add(dl)
	d.pending++
	d.waiting = append(d.waiting, dl)
	d.notify()
	d.poke()
}

// poke wakes the scheduler.
func (d *dispatcher) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// run is the scheduler: it starts the attempts that are due and sleeps
// until the next one is, or until something changes.
func (d *dispatcher) run() {
	defer close(d.stopped)
	defer d.attempts.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, ok := d.startDue()
		if !ok {
			return
		}
		timer.Reset(next)
		select {
		case <-d.wake:
		case <-timer.C:
		case <-d.ctx.Done():
			return
		}
	}
}

// startDue starts every due attempt that a free slot allows, and returns
// how long to sleep before the next one is due; false once closing.
func (d *dispatcher) startDue() (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return 0, false
	}
	sleep := time.Hour
	if d.paused {
		return sleep, true
	}
	now := d.wall()
	// Due first, then queued first; deliveryChaos.NewestFirst sends the
	// newest of those due first.
	slices.SortStableFunc(d.waiting, func(a, b *Delivery) int {
		if d.chaos.NewestFirst {
			return cmpUint(b.seq, a.seq)
		}
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		return cmpUint(a.seq, b.seq)
	})
	kept := d.waiting[:0]
	for _, dl := range d.waiting {
		if wait := dl.due.Sub(now); wait > 0 || d.running >= d.concurrency {
			if wait > 0 {
				sleep = min(sleep, wait)
			}
			kept = append(kept, dl)
			continue
		}
		if len(dl.Attempts) == 0 {
			dl.waits = d.retries // the schedule as it is at the first attempt
		}
		d.aim(dl)
		d.running++
		d.attempts.Add(1)
		go d.deliverOnce(dl)
	}
	clear(d.waiting[len(kept):])
	d.waiting = kept
	return sleep, true
}

// aim points dl's next attempt at its receiver. With several webhook URLs,
// first attempts take them in turn (round robin), and each retry goes to
// the URL after the one its previous attempt went to, so that a receiver
// that fails does not get the retry. d.mu must be held.
func (d *dispatcher) aim(dl *Delivery) {
	n := len(dl.urls)
	if n < 2 {
		return
	}
	if len(dl.Attempts) == 0 {
		dl.turn = d.turn % n
		d.turn++
	} else {
		dl.turn = (dl.turn + 1) % n
	}
	dl.URL = dl.urls[dl.turn]
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// deliverOnce makes one attempt of dl, then records it and, when it failed
// and the delivery's retry schedule (as it was at the first attempt) has a
// wait left, queues the next attempt after that wait.
func (d *dispatcher) deliverOnce(dl *Delivery) {
	defer d.attempts.Done()
	a := d.attempt(dl)
	ok := a.StatusCode >= 200 && a.StatusCode <= 299
	d.mu.Lock()
	defer d.mu.Unlock()
	dl.Attempts = append(dl.Attempts, a)
	dl.NextAttemptAt = time.Time{}
	d.running--
	n := len(dl.Attempts)
	switch {
	case ok:
		dl.Status = DeliveryDelivered
		d.pending--
	case d.ctx.Err() != nil:
		// closing: the delivery stays pending
	case n > len(dl.waits):
		dl.Status = DeliveryFailed
		d.pending--
	default:
		wait := dl.waits[n-1]
		dl.due, dl.NextAttemptAt = d.wall().Add(wait), d.now().Add(wait)
		d.waiting = append(d.waiting, dl)
	}
	d.notify()
	d.poke()
}

func (d *dispatcher) attempt(dl *Delivery) DeliveryAttempt {
	d.mu.Lock()
	scheme, secrets := d.scheme, d.secrets
	d.mu.Unlock()
	a := DeliveryAttempt{At: d.now(), URL: dl.URL, Scheme: scheme}
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
		name = d.differences.signatureHeader(name)
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		a.Error = err.Error()
	} else {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, responseBodyLimit))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		a.StatusCode = resp.StatusCode
		a.ResponseBody = strings.ToValidUTF8(string(head), "\uFFFD")
		a.ResponseHeader = keptHeader(resp.Header)
	}
	a.Duration = d.wall().Sub(start)
	if d.logger != nil {
		d.logger.LogAttrs(d.ctx, slog.LevelInfo, "paymentstest: webhook attempt",
			slog.String("event_id", dl.EventID), slog.String("event", string(dl.Event)), slog.String("scheme", string(a.Scheme)),
			slog.Int("status", a.StatusCode), slog.String("error", a.Error), slog.Duration("duration", a.Duration))
	}
	return a
}

// close stops the scheduler, cuts the attempts in flight short and waits
// for them.
func (d *dispatcher) close() {
	d.cancel()
	<-d.stopped
	d.transport.CloseIdleConnections()
}

// idle reports whether no delivery is pending and no late work will send
// events. d.mu must be held.
func (d *dispatcher) idle() bool {
	return d.pending == 0 && d.scheduled == 0
}

// WaitForDeliveries blocks until every queued delivery is delivered or has
// failed all its attempts, and the late work of the test values (a late
// verification or payment, see Sandbox.ProcessingDelay) has sent its events.
// It returns ctx's error if ctx ends first (as it will while deliveries
// are paused with some pending), and an error saying the server closed if
// it closes with deliveries still pending.
func (s *Server) WaitForDeliveries(ctx context.Context) error {
	d := s.hooks
	for {
		d.mu.Lock()
		switch {
		case d.idle():
			d.mu.Unlock()
			return nil
		case d.ctx.Err() != nil:
			d.mu.Unlock()
			return errClosed
		}
		ch := d.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-d.stopped:
			return errClosed
		}
	}
}

// pauseDeliveries stops starting delivery attempts: events are still
// recorded and their deliveries queued, and retries that come due wait,
// until ResumeDeliveries. Attempts in flight finish. The dashboard's Pause
// button and the admin API's POST /_sandbox/deliveries/pause call it.
func (s *Server) pauseDeliveries() { s.hooks.setPaused(true) }

// resumeDeliveries starts the attempts that came due while paused, oldest
// first, and the later ones on their schedule.
func (s *Server) resumeDeliveries() { s.hooks.setPaused(false) }

// deliveriesPaused reports whether PauseDeliveries is in effect.
func (s *Server) deliveriesPaused() bool {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.paused
}

func (d *dispatcher) setPaused(p bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused = p
	d.notify()
	d.poke()
}

// Bounds of the response headers an attempt keeps.
const (
	maxKeptHeaders     = 32
	maxKeptHeaderValue = 256
)

// keptHeader is a copy of a receiver's response headers for the delivery
// log: at most maxKeptHeaders values, each cut to maxKeptHeaderValue bytes.
func keptHeader(h http.Header) http.Header {
	out := http.Header{}
	n := 0
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			if n == maxKeptHeaders {
				return out
			}
			if len(v) > maxKeptHeaderValue {
				v = strings.ToValidUTF8(v[:maxKeptHeaderValue], "") + "…"
			}
			out[name] = append(out[name], v)
			n++
		}
	}
	return out
}
