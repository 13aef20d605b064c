package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// doctor runs the probes and keeps the report.
type doctor struct {
	cfg      *doctorConfig
	http     *http.Client
	contract contract
	rep      *report
	obs      []*observation // every answer, for the headers' rows
	start    time.Time      // the service's clock when doctor began
	// stopped says why doctor stopped probing (the base URL gave no
	// answer, --timeout ran out, Ctrl-C); "" while it goes on.
	stopped  string
	warnings []string         // for stderr, at the end
	recv     *deliveryCatcher // doctor's receiver; nil when it has none
}

func newDoctor(cfg *doctorConfig, rt http.RoundTripper) *doctor {
	return &doctor{cfg: cfg, http: newHTTP(rt), contract: newDocumentContract(), rep: newReport()}
}

// The rows each stage of run decides: once its stage has run, no later
// probe looks at them, and they are printed.
var (
	readRows  = []string{"Base URL"}
	writeRows = []string{"Required initiate fields", "Other request fields", "Idempotency", "Identifiers", "Confirm payment",
		"Test event id", "Test events", "Webhook body", "Webhook signature", "List events",
		"Payment statuses", "Payment fields", "Quote in the initiate response", "Status codes", "Error body", "Error codes"}
)

// run runs every probe the configuration allows, in an order where each
// one's findings can feed the next, and prints each row once decided.
func (d *doctor) run(ctx context.Context) {
	d.rep.decideUnprobed()
	d.probeWithoutKey(ctx)
	d.probeListEvents(ctx)
	d.probeUnknownCursor(ctx)
	d.rep.decide(readRows...)
	switch {
	case !d.cfg.writes:
		d.skipWrites("--production: this probe creates something, and runs against a sandbox you name only")
	case d.stopped != "":
	default:
		restore, why := d.redirectDeliveries(ctx)
		if why != "" {
			d.skipWrites(why)
			break
		}
		defer restore() // on a panic too; restore runs once
		d.writeProbes(ctx)
		restore()
	}
	d.rep.decide(writeRows...)
	d.probeRateLimit(ctx) // doctor_ratelimit.go
	d.probeHeaders()
	d.rep.finish(d.stopped)
}

// writeProbes runs the probes that create something: only against a
// sandbox the merchant named, with the deliveries going to doctor.
func (d *doctor) writeProbes(ctx context.Context) {
	id := d.probeRecipient(ctx)
	pay := d.probeInitiate(ctx, id)
	d.probeInvalidInitiate(ctx)
	d.rep.decide("Required initiate fields", "Other request fields", "Idempotency", "Identifiers")
	paymentID, status := d.probeConfirm(ctx, pay) // doctor_confirm.go
	d.rep.decide("Confirm payment")
	d.probeWebhooks(ctx) // doctor_webhooks.go
	d.rep.decide("Test event id", "Test events", "Webhook body", "Webhook signature", "List events")
	d.followPayment(ctx, paymentID, status)
}

// skipWrites marks the rows whose probes create something.
func (d *doctor) skipWrites(why string) {
	for _, t := range topics {
		if t.creates {
			d.rep.cannot(t.name, why)
		}
	}
}

// redirectDeliveries points the service's deliveries at doctor's receiver
// before anything is created: with --receive, where the merchant pointed
// them; against our sandbox, by its admin API, until restore (which first
// lets doctor's own deliveries drain, and runs once, bounded, whatever
// happened to ctx). why says why there is no receiver, and then nothing
// may be created.
func (d *doctor) redirectDeliveries(ctx context.Context) (restore func(), why string) {
	restore = func() {}
	if d.cfg.receive != "" {
		r, err := startCatcher(d.cfg.receive)
		if err != nil {
			return restore, err.Error()
		}
		d.recv = r
		return func() { _ = r.srv.Close() }, ""
	}
	o := d.send(ctx, http.MethodGet, "/_sandbox/webhook-url", nil, true)
	old, isString := o.data()["url"].(string)
	var oldURLs []string // several: the sandbox delivers round robin, and gets them all back
	if list, ok := o.data()["urls"].([]any); ok && len(list) > 1 {
		for _, u := range list {
			if s, ok := u.(string); ok {
				oldURLs = append(oldURLs, s)
			}
		}
	}
	if o.err != nil || o.status != http.StatusOK || !isString {
		return restore, "doctor created nothing: its events would go to the webhook URL set in the sandbox's dashboard, " +
			"perhaps your own receiver. Run doctor with --receive ADDR and point that URL (or a tunnel) at it"
	}
	r, err := startCatcher("127.0.0.1:0")
	if err != nil {
		return restore, err.Error()
	}
	if !d.setWebhookURL(ctx, r.url) {
		_ = r.srv.Close()
		return restore, "doctor created nothing: the sandbox's webhook URL could not be pointed at doctor's receiver"
	}
	d.recv = r
	var once sync.Once
	return func() {
		once.Do(func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			w := d.do(cctx, http.MethodPost, "/_sandbox/deliveries/wait", []byte(`{"timeout_seconds": 5}`), true)
			if w.err != nil || w.status != http.StatusOK {
				d.warnings = append(d.warnings, fmt.Sprintf("some of doctor's events may still be undelivered: they may reach %s once it is back "+
					"(their references start with doctor- or %s)", show(old), testReferencePrefix))
			}
			if !d.setWebhookURL(cctx, old, oldURLs...) {
				d.warnings = append(d.warnings, fmt.Sprintf("the sandbox's webhook URL could not be put back: it still points at doctor's receiver, which has stopped. "+
					"Set it with: payments sandbox webhook-url %s", orNoneURL(old)))
			}
			_ = r.srv.Close()
		})
	}, ""
}

// setWebhookURL sets the sandbox's webhook URL (admin API), even after
// doctor stopped probing; with several urls, those instead.
func (d *doctor) setWebhookURL(ctx context.Context, u string, urls ...string) bool {
	b, _ := json.Marshal(map[string]string{"url": u})
	if len(urls) > 1 {
		b, _ = json.Marshal(map[string][]string{"urls": urls})
	}
	o := d.do(ctx, http.MethodPut, "/_sandbox/webhook-url", b, true)
	return o.err == nil && o.status == http.StatusOK
}

func orNoneURL(u string) string {
	if u == "" {
		return "none"
	}
	return u
}

// errNotSent is the error of a probe not sent because doctor had stopped.
var errNotSent = errors.New("not sent")

// send makes one request and observes the answer. header holds extra
// headers; withKey adds the bearer key. Once a request got no answer
// (or ctx ended), doctor stops: nothing more is sent, and each later
// probe's observation carries errNotSent.
func (d *doctor) send(ctx context.Context, method, path string, body []byte, withKey bool, header ...string) *observation {
	if d.stopped != "" {
		req, _ := http.NewRequest(method, d.cfg.baseURL+path, nil)
		return &observation{req: req, err: errNotSent, why: d.stopped}
	}
	o := d.do(ctx, method, path, body, withKey, header...)
	if o.err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			d.stopped = fmt.Sprintf("--timeout %s ran out", d.cfg.timeout)
		case ctx.Err() != nil:
			d.stopped = "interrupted"
		default:
			d.stopped = d.scrub(fmt.Sprintf("%s got no answer: %v", o.what(), o.err))
		}
		d.rep.stopped = d.stopped
	}
	return o
}

// do sends one request, whether or not doctor stopped.
func (d *doctor) do(ctx context.Context, method, path string, body []byte, withKey bool, header ...string) *observation {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.cfg.baseURL+path, rd)
	o := &observation{req: req, reqBody: body}
	if err != nil {
		o.err = err
		return o
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "payments-cli/"+payments.Version+" (doctor)")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if withKey {
		req.Header.Set("Authorization", "Bearer "+d.cfg.key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := d.http.Do(req)
	if err != nil {
		o.err = err
		return o
	}
	defer resp.Body.Close()
	o.status, o.header = resp.StatusCode, resp.Header
	o.body, o.err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if o.err != nil {
		return o // a body cut short is no answer
	}
	o.obj = decodeLoose(o.body)
	if !strings.HasPrefix(path, "/_sandbox/") { // the sandbox's own API is not the service's
		d.obs = append(d.obs, o)
	}
	return o
}

// noAnswer says why o has no answer, for a "could not check" row.
func (o *observation) noAnswer() string {
	if errors.Is(o.err, errNotSent) {
		return fmt.Sprintf("%s was not sent: doctor had stopped (%s)", o.what(), o.why)
	}
	return fmt.Sprintf("%s got no answer: %v", o.what(), o.err)
}
