package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// testReferencePrefix is how the sandbox marks a triggered event's
// resource ("test_trigger_"; doctor_test.go holds
// the two equal): the "Test events" assumption.
const testReferencePrefix = "test_trigger_"

// eventTypes are the specification's event kinds, each triggered once.
var eventTypes = []payments.EventType{
	payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected,
	payments.EventVirtualAccountPaymentReceived, payments.EventVirtualAccountCreated, payments.EventVirtualAccountUpdated,
	payments.EventRecipientCreated, payments.EventRecipientVerified, payments.EventRecipientVerificationFailed,
	payments.EventAccountBalanceLow, payments.EventAccountUpdated,
}

// delivery is a request that reached doctor's receiver.
type delivery struct {
	header http.Header
	body   []byte
}

// deliveryCatcher is doctor's receiver: it takes the service's deliveries during the run and answers 200.
type deliveryCatcher struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	got  []delivery
	more chan struct{}
}

func startCatcher(addr string) (*deliveryCatcher, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--receive %s: %v", addr, err)
	}
	r := &deliveryCatcher{url: "http://" + ln.Addr().String() + "/webhooks", more: make(chan struct{}, 1)}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.got = append(r.got, delivery{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		select {
		case r.more <- struct{}{}:
		default:
		}
	})}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *deliveryCatcher) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// await waits until want(deliveries) or the wait ends.
func (r *deliveryCatcher) await(ctx context.Context, wait time.Duration, want func([]delivery) bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for !want(r.deliveries()) {
		select {
		case <-r.more:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// probeWebhooks triggers each event type and checks the events, as listed
// and as delivered to doctor's receiver.
func (d *doctor) probeWebhooks(ctx context.Context) {
	recv := d.recv // redirectDeliveries set it before anything was created
	ids := map[string]payments.EventType{}
	for _, t := range eventTypes {
		o := d.send(ctx, http.MethodPost, "/webhooks/events/trigger/"+url.PathEscape(string(t)), nil, true)
		if o.err != nil {
			d.cannotAfter(o, "Test event id")
			break
		}
		if o.status >= 400 {
			d.check(o, "Error body", "Error body", "Error codes")
			d.rep.differ("Test event id", d.scrub(fmt.Sprintf("POST /webhooks/events/trigger/%s answered HTTP %d: %v", t, o.status, o.obj["message"])))
			continue
		}
		d.check(o, "Test event id", "Test event id", "Status codes")
		if id, _ := o.data()["id"].(string); id != "" {
			ids[id] = t
		}
	}
	if len(ids) == 0 {
		for _, r := range []string{"Test events", "Webhook body", "Webhook signature"} {
			d.rep.cannot(r, "no triggered event could be named (the trigger answers gave no event id, or none came)")
		}
		return
	}
	ours := func(body []byte) bool {
		var ev struct{ ID string }
		return json.Unmarshal(body, &ev) == nil && ids[ev.ID] != ""
	}
	if recv != nil {
		recv.await(ctx, d.cfg.wait, func(got []delivery) bool {
			n := 0
			for _, g := range got {
				if ours(g.body) {
					n++
				}
			}
			return n >= len(ids)
		})
		d.checkDeliveries(recv.deliveries(), ours, len(ids))
	}
	d.checkListed(ctx, ids)
}

// checkDeliveries checks the deliveries of the triggered events: body,
// headers, and the signature with PAYMENTS_WEBHOOK_SECRET.
func (d *doctor) checkDeliveries(got []delivery, ours func([]byte) bool, want int) {
	n := 0
	for _, g := range got {
		if !ours(g.body) {
			continue
		}
		n++
		var ev struct{ Event string }
		_ = json.Unmarshal(g.body, &ev)
		what := "the delivery of " + show(ev.Event)
		if !d.judge(d.contract.CheckWebhook(g.header, g.body), what, "Webhook body", "Webhook body") {
			continue
		}
		d.checkSignature(what, g)
	}
	if n == 0 {
		d.rep.cannot("Webhook signature", fmt.Sprintf("no delivery of the %d triggered events reached doctor within %s (--wait)", want, d.cfg.wait))
	}
}

// checkSignature verifies a delivery's signature with the secrets of
// PAYMENTS_WEBHOOK_SECRET, when given.
func (d *doctor) checkSignature(what string, g delivery) {
	if len(d.cfg.secrets) == 0 {
		d.rep.hold("Webhook signature", what+" carries Payments-Signature: t=...,v1=... (not verified: set "+envWebhookSecret+" to verify it)")
		return
	}
	var err error
	if d.cfg.scheme == schemeStandard {
		v, verr := webhook.NewStandardVerifier(d.cfg.secrets)
		if err = verr; err == nil {
			err = v.Verify(g.body, g.header)
		}
	} else {
		v, verr := webhook.NewSignatureVerifier(d.cfg.secrets)
		if err = verr; err == nil {
			err = v.Verify(g.body, g.header)
		}
	}
	if err != nil {
		d.rep.differ("Webhook signature", d.scrub(fmt.Sprintf("%s does not verify with %s: %v", what, envWebhookSecret, err)))
		return
	}
	d.rep.hold("Webhook signature", what+" carries Payments-Signature and verifies with "+envWebhookSecret)
}

// checkListed lists the events since doctor began and checks that the
// triggered ones are there, with their bodies and test markers.
func (d *doctor) checkListed(ctx context.Context, ids map[string]payments.EventType) {
	found := map[string]bool{}
	q := url.Values{"since": {d.start.UTC().Format(time.RFC3339)}, "limit": {"100"}}
	for page := 0; page < 20; page++ {
		o := d.send(ctx, http.MethodGet, "/webhooks/events?"+q.Encode(), nil, true)
		if !d.check(o, "List events", "List events") && (o.err != nil || o.status >= 400) {
			return
		}
		evs, _ := o.data()["events"].([]any)
		last := ""
		for _, e := range evs {
			ev, _ := e.(map[string]any)
			id, _ := ev["id"].(string)
			last = id
			if ids[id] == "" || found[id] {
				continue
			}
			found[id] = true
			for _, err := range checkEventBody(ev) {
				topic, seen := topicOf(err, "Webhook body")
				d.rep.differ(topic, d.scrub("listed "+show(string(ids[id]))+": "+seen))
			}
			d.checkTestMarker(string(ids[id]), ev)
		}
		if more, _ := o.data()["has_more"].(bool); !more || last == "" {
			break
		}
		q.Del("since")
		q.Set("after", last)
	}
	if len(found) < len(ids) {
		d.rep.differ("List events", fmt.Sprintf("%d of the %d triggered events are not in the list since doctor began", len(ids)-len(found), len(ids)))
		return
	}
	d.rep.hold("List events", fmt.Sprintf("the %d triggered events are listed", len(ids)))
	d.rep.hold("Webhook body", "as assumed: the triggered events as listed")
}

// checkTestMarker checks that a triggered event's resource is marked as
// a test.
func (d *doctor) checkTestMarker(typ string, ev map[string]any) {
	data, _ := ev["data"].(map[string]any)
	ref, _ := data["reference"].(string)
	if !strings.HasPrefix(ref, testReferencePrefix) {
		d.rep.differ("Test events", d.scrub(fmt.Sprintf("the triggered %s event's reference is %s, without the %s prefix: it reads as a real event", typ, show(ref), testReferencePrefix)))
		return
	}
	d.rep.hold("Test events", "each triggered event's reference starts with "+testReferencePrefix)
}
