package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// forwardTimeout bounds one delivery attempt to the local receiver.
const forwardTimeout = 30 * time.Second

// maxPending bounds the events whose retries are waiting: beyond it, a
// failed event is given up at once, so that a receiver that is down while
// events pour in costs bounded memory.
const maxPending = 1000

// signer returns the headers that sign body, the event ev, at time now.
type signer func(ev *payments.Event, body []byte, now time.Time) (http.Header, error)

// newSigner signs as the service does with the scheme: the
// Payments-Signature header, or Standard Webhooks with webhook-id = the
// event's id. It checks the secrets (from says where they came from)
// first; the error never repeats them.
func newSigner(scheme string, secrets []string, from string) (signer, error) {
	switch scheme {
	case schemePayments:
		return func(_ *payments.Event, body []byte, now time.Time) (http.Header, error) {
			h := http.Header{}
			h.Set(webhook.SignatureHeader, webhook.SignPayload(body, now, secrets...))
			return h, nil
		}, nil
	case schemeStandard:
		if _, err := webhook.NewStandardVerifier(secrets); err != nil {
			_, reason, _ := strings.Cut(err.Error(), "NewStandardVerifier: ")
			return nil, usagef("--scheme standard needs Standard Webhooks secrets (whsec_ and base64; without a secret, listen makes one), but in %s, %s", from, reason)
		}
		return func(ev *payments.Event, body []byte, now time.Time) (http.Header, error) {
			return webhook.SignStandard(ev.ID, now, body, secrets...)
		}, nil
	}
	return nil, usagef("--scheme %q: give payments (the Payments-Signature header) or standard (Standard Webhooks)", scheme)
}

// lines writes whole lines to one writer from several goroutines.
type lines struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// printf writes a line that starts with the local time.
func (l *lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s  "+format+"\n", append([]any{l.now().Format(time.DateTime)}, args...)...)
}

// forwarder delivers events to the local receiver. The first attempt of
// each event is made at once, in the order events are given to forward; an
// event that fails is retried on its own schedule in the background, so
// that later events are not held up behind it (as the service itself
// retries a delivery while it sends the next ones).
type forwarder struct {
	url   string
	sign  signer
	waits []time.Duration // before each retry
	http  *http.Client
	out   *lines

	wg      sync.WaitGroup
	mu      sync.Mutex
	pending map[string]*payments.Event // not yet delivered nor given up
}

func newForwarder(target string, sign signer, waits []time.Duration, out *lines) *forwarder {
	return &forwarder{
		url: target, sign: sign, waits: waits, out: out,
		http: &http.Client{
			Timeout: forwardTimeout,
			// A redirect is the receiver's answer, shown as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		pending: map[string]*payments.Event{},
	}
}

// outcome is one attempt's result.
type outcome struct {
	status int // 0 when no answer came
	err    error
	took   time.Duration
}

func (o outcome) ok() bool { return o.err == nil && o.status >= 200 && o.status < 300 }

func (o outcome) String() string {
	took := fmt.Sprintf("%dms", o.took.Milliseconds())
	if o.err != nil {
		return "[ERR] " + took + " " + o.err.Error()
	}
	return fmt.Sprintf("[%d] %s", o.status, took)
}

// forward makes the first attempt to deliver ev, and schedules its retries
// when it fails. It returns when the first attempt is done.
func (f *forwarder) forward(ctx context.Context, ev *payments.Event) {
	f.mu.Lock()
	f.pending[ev.ID] = ev
	crowded := len(f.pending) > maxPending
	f.mu.Unlock()
	res := f.attempt(ctx, ev)
	if ctx.Err() != nil {
		return // stopped: the event stays pending, and the summary names it
	}
	switch {
	case res.ok():
		f.report(ev, 1, res, "")
		f.done(ev)
	case len(f.waits) == 0 || crowded:
		f.report(ev, 1, res, "")
		f.giveUp(ev, 1, crowded)
	default:
		f.report(ev, 1, res, fmt.Sprintf(", next in %s", f.waits[0]))
		f.wg.Add(1)
		go f.retry(ctx, ev)
	}
}

// retry delivers ev again after each wait, until it is delivered, the
// waits run out, or ctx ends.
func (f *forwarder) retry(ctx context.Context, ev *payments.Event) {
	defer f.wg.Done()
	for i, wait := range f.waits {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		n := i + 2
		res := f.attempt(ctx, ev)
		if ctx.Err() != nil {
			return
		}
		next := ""
		if !res.ok() && i+1 < len(f.waits) {
			next = fmt.Sprintf(", next in %s", f.waits[i+1])
		}
		f.report(ev, n, res, next)
		if res.ok() {
			f.done(ev)
			return
		}
	}
	f.giveUp(ev, len(f.waits)+1, false)
}

// attempt POSTs ev's body, exactly as the service gave it, signed now.
func (f *forwarder) attempt(ctx context.Context, ev *payments.Event) outcome {
	body := ev.RawJSON()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return outcome{err: err}
	}
	h, err := f.sign(ev, body, time.Now())
	if err != nil {
		return outcome{err: err}
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payments-cli/"+payments.Version)
	start := time.Now()
	resp, err := f.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is on the line already
		}
		return outcome{err: err, took: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // lets the connection be reused
	resp.Body.Close()
	return outcome{status: resp.StatusCode, took: time.Since(start)}
}

// report prints the line of attempt n: time, type, id, what was sent and
// the answer.
func (f *forwarder) report(ev *payments.Event, n int, res outcome, next string) {
	var of string
	if n > 1 || !res.ok() {
		of = fmt.Sprintf(" (attempt %d of %d%s)", n, len(f.waits)+1, next)
	}
	f.out.printf("%s  %s  --> POST %s %s%s", show(string(ev.Type)), show(ev.ID), f.url, res, of)
}

// giveUp prints that ev is no longer retried, and how to replay it.
func (f *forwarder) giveUp(ev *payments.Event, attempts int, crowded bool) {
	why := fmt.Sprintf("after %d attempts", attempts)
	if attempts == 1 {
		why = "after 1 attempt"
	}
	if crowded {
		why += fmt.Sprintf(" (%d events are waiting for a retry already)", maxPending)
	}
	f.out.printf("%s  %s  gave up %s%s", show(string(ev.Type)), show(ev.ID), why, replayHint([]*payments.Event{ev}))
	f.done(ev)
}

func (f *forwarder) done(ev *payments.Event) {
	f.mu.Lock()
	delete(f.pending, ev.ID)
	f.mu.Unlock()
}

// stop waits for the retries to see that ctx ended, and returns the events
// that were not delivered, oldest first.
func (f *forwarder) stop() []*payments.Event {
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	var evs []*payments.Event
	for _, ev := range f.pending {
		evs = append(evs, ev)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].CreatedAt.Before(evs[j].CreatedAt) })
	return evs
}

// replayHint says how to deliver evs again: payments listen --since the
// oldest one's creation time. The receiver drops what it processed already.
func replayHint(evs []*payments.Event) string {
	if len(evs) == 0 || evs[0].CreatedAt.IsZero() {
		return ""
	}
	return "; replay with: payments listen --since " + evs[0].CreatedAt.UTC().Format(time.RFC3339) + " --forward-to ..."
}

// eventIDs joins the events' ids.
func eventIDs(evs []*payments.Event) string {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = show(ev.ID)
	}
	return strings.Join(ids, ", ")
}
