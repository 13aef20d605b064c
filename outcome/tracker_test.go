package outcome_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// downStore fails every call while down is set.
type downStore struct {
	outcome.Store
	down   atomic.Bool
	writes atomic.Int64
}

var errDown = errors.New("store down")

func (s *downStore) Load(ctx context.Context, key string) (outcome.Outcome, error) {
	if s.down.Load() {
		return outcome.Outcome{}, errDown
	}
	return s.Store.Load(ctx, key)
}

func (s *downStore) Update(ctx context.Context, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	if s.down.Load() {
		return outcome.Outcome{}, errDown
	}
	return s.Store.Update(ctx, id, func(cur outcome.Outcome) (outcome.Outcome, bool, error) {
		next, write, err := fn(cur)
		if write && err == nil {
			s.writes.Add(1)
		}
		return next, write, err
	})
}

// handler is a handler whose function Wrap makes, counting the calls of the
// merchant's function per event id.
func handler(t *testing.T, tr *outcome.Tracker, fail func(*payments.Event) error) (http.Handler, map[string]int) {
	calls := map[string]int{}
	h := tr.NewHandler(outcometest.Verifier(t), func(_ context.Context, ev *payments.Event) error {
		calls[ev.ID]++
		if fail != nil {
			return fail(ev)
		}
		return nil
	})
	return h, calls
}

// A tracker store that is down: the delivery is refused (500 with a
// webhook.MemoryClaimStore for event ids; 503 where both share a database, see
// pgstore's tests), the merchant's function does not run, nothing is
// marked, and the service's next delivery records it once.
func TestWrapStoreDownMarksNothing(t *testing.T) {
	s := &downStore{Store: outcome.NewMemoryStore()}
	tr := outcome.NewTracker(s)
	h, calls := handler(t, tr, nil)
	body := outcometest.Body("ev-1", payments.EventPaymentCompleted, "pay-1", "order-1")
	s.down.Store(true)
	if code := outcometest.Deliver(h, body); code != http.StatusServiceUnavailable {
		t.Fatalf("delivery with the store down answered %d, want 503", code)
	}
	s.down.Store(false)
	if calls["ev-1"] != 0 || s.writes.Load() != 0 {
		t.Fatalf("store down: %d calls, %d writes; want none", calls["ev-1"], s.writes.Load())
	}
	if _, err := tr.Get(context.Background(), "pay-1"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("Get after the failed delivery: %v, want ErrNotFound", err)
	}
	for i := 0; i < 2; i++ {
		if code := outcometest.Deliver(h, body); code != http.StatusOK {
			t.Fatalf("redelivery %d answered %d", i, code)
		}
	}
	o, err := tr.Get(context.Background(), "order-1")
	if err != nil || o.State != outcome.StateCompleted || calls["ev-1"] != 1 || s.writes.Load() != 1 {
		t.Fatalf("after the redeliveries: %+v %v, %d calls, %d writes; want completed, 1, 1", o, err, calls["ev-1"], s.writes.Load())
	}
}

// The merchant's function fails: the tracker has recorded the event; the
// redelivery runs the function again and records nothing more.
func TestWrapFunctionFailsThenRedelivery(t *testing.T) {
	s := &downStore{Store: outcome.NewMemoryStore()}
	tr := outcome.NewTracker(s)
	failed := false
	h, calls := handler(t, tr, func(*payments.Event) error {
		if !failed {
			failed = true
			return errors.New("order database down")
		}
		return nil
	})
	body := outcometest.Body("ev-1", payments.EventPaymentFailed, "pay-1", "order-1")
	if code := outcometest.Deliver(h, body); code != http.StatusInternalServerError {
		t.Fatalf("first delivery answered %d", code)
	}
	if code := outcometest.Deliver(h, body); code != http.StatusOK {
		t.Fatalf("redelivery answered %d", code)
	}
	o, _ := tr.Get(context.Background(), "pay-1")
	if calls["ev-1"] != 2 || s.writes.Load() != 1 || len(o.Steps) != 1 || o.State != outcome.StateFailed {
		t.Fatalf("%d calls, %d writes, %+v", calls["ev-1"], s.writes.Load(), o)
	}
}

func TestWrapUnknownKindsPassThrough(t *testing.T) {
	s := &downStore{Store: outcome.NewMemoryStore()}
	h, calls := handler(t, outcome.NewTracker(s), nil)
	body := []byte(`{"id":"ev-9","event":"account.balance_low","data":{"currency":"NGN"}}`)
	if code := outcometest.Deliver(h, body); code != http.StatusOK || calls["ev-9"] != 1 || s.writes.Load() != 0 {
		t.Fatalf("answered %d, %d calls, %d writes; want 200, 1, 0", code, calls["ev-9"], s.writes.Load())
	}
}

// untrackableBodies are deliveries of tracked kinds that the tracker
// cannot record, each with the reason its log line must give.
var untrackableBodies = map[string]struct{ body, why string }{
	"no payment id": {`{"id":"ev-1","event":"payment.completed","data":{"status":"completed","account_number":"0123456789"}}`, "no payment id"},
	"reference with a control character": {`{"id":"ev-2","event":"payment.completed","data":{"id":"pay-2","reference":"0123456789\u0007","status":"completed"}}`,
		"reference contains control characters"},
	"reference of 256 characters": {`{"id":"ev-3","event":"payment.failed","data":{"id":"pay-3","reference":"` + strings.Repeat("付", 256) + `","status":"failed"}}`,
		"reference is longer than 255 characters"},
	"data not an object": {`{"id":"ev-4","event":"recipient.verified","data":[1,2]}`, "not a JSON object"},
}

// An event the tracker cannot record: the merchant's function runs once
// and the delivery is answered 200 (never 500, which would have the
// service deliver it again for nothing); nothing is written; one warning
// names the event and why, never its data. A failing function still gets
// its delivery retried, and the tracker still records nothing.
func TestWrapUntrackableEventRunsTheFunction(t *testing.T) {
	for name, c := range untrackableBodies {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &downStore{Store: outcome.NewMemoryStore()}
			tr := outcome.NewTracker(s, outcome.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			fail := true
			h, calls := handler(t, tr, func(*payments.Event) error {
				if fail {
					fail = false
					return errors.New("order database down")
				}
				return nil
			})
			if code := outcometest.Deliver(h, []byte(c.body)); code != http.StatusInternalServerError {
				t.Fatalf("the function failed: answered %d, want 500 (the function's failure, not the tracker's)", code)
			}
			if code := outcometest.Deliver(h, []byte(c.body)); code != http.StatusOK {
				t.Fatalf("redelivery answered %d, want 200", code)
			}
			var id string
			for k, n := range calls {
				id = k
				if n != 2 {
					t.Fatalf("the function ran %d times for %s, want 2 (once per delivery)", n, k)
				}
			}
			if len(calls) != 1 || s.writes.Load() != 0 {
				t.Fatalf("calls %v, %d writes; want one event and no write", calls, s.writes.Load())
			}
			recs := outcometest.Records(t, logs.String(), untrackableMsg)
			if len(recs) != 2 || recs[0]["event_id"] != id || recs[0]["level"] != "WARN" || !strings.Contains(recs[0]["error"].(string), c.why) {
				t.Fatalf("want a warning per delivery naming %s and %q; log: %s", id, c.why, logs.String())
			}
			if strings.Contains(logs.String(), "0123456789") || strings.Contains(logs.String(), "付") {
				t.Fatal("the log repeats the event's data")
			}
		})
	}
}

const untrackableMsg = "outcome: event cannot be tracked; the merchant's function runs and the event counts as processed"

// Apply reports an event it cannot record as EffectUntrackable with a nil
// error, writes nothing, and logs a warning; a store that fails is still
// an error. Events of kinds the tracker does not follow, and a nil event,
// are EffectNone.
func TestApplyUntrackable(t *testing.T) {
	var logs bytes.Buffer
	s := &downStore{Store: outcome.NewMemoryStore()}
	tr := outcome.NewTracker(s, outcome.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	ctx := context.Background()
	events := []*payments.Event{{Type: payments.EventPaymentCompleted, Data: []byte(`{"id":"pay-1","reference":"order-1"}`)}} // no event id
	for _, c := range untrackableBodies {
		ev, err := payments.ParseEvent([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	for _, ev := range events {
		o, eff, err := tr.Apply(ctx, ev)
		if err != nil || eff != outcome.EffectUntrackable || o.ID != "" {
			t.Fatalf("Apply(%s) = %+v, %s, %v; want EffectUntrackable and a nil error", ev.ID, o, eff, err)
		}
	}
	if n := len(outcometest.Records(t, logs.String(), untrackableMsg)); n != len(events) || s.writes.Load() != 0 {
		t.Fatalf("%d warnings, %d writes; want %d and 0: %s", n, s.writes.Load(), len(events), logs.String())
	}
	if _, eff, err := tr.Apply(ctx, nil); err != nil || eff != outcome.EffectNone {
		t.Fatalf("Apply(nil) = %s, %v", eff, err)
	}
	s.down.Store(true)
	if _, eff, err := tr.Apply(ctx, outcometest.Event(t, "ev-9", payments.EventPaymentCompleted, "pay-9", "order-9")); !errors.Is(err, errDown) || eff != outcome.EffectNone {
		t.Fatalf("store down: %s, %v; want the store's error", eff, err)
	}
}

// Payments referenced in German, French, Yoruba (both spellings of its dots)
// and Chinese, made through the SDK against the fake service, which
// delivers their events to a handler made by Wrap: every delivery is
// answered 200, the merchant's function runs once per event, and each
// payment is tracked under its reference exactly as sent: Await answers by
// reference, Get finds it, and Stuck lists none of them.
func TestWrapReferencesInAnyScript(t *testing.T) {
	tr := outcome.NewTracker(nil)
	var mu sync.Mutex
	calls := map[string]int{}
	h := webhook.NewHandler(mustVerifier(t), tr.Wrap(func(_ context.Context, ev *payments.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls[ev.ID]++
		return nil
	}))
	recv := httptest.NewServer(h)
	defer recv.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: recv.URL, Secrets: []string{"whsec-outcome"}}))
	defer srv.Close()
	ctx := outcometest.Ctx(t)
	ids := map[string]string{}
	for _, ref := range outcometest.References {
		p, _ := fakePayment(t, srv, ref, paymentstest.AmountCompletesLate)
		if err := tr.Confirmed(ctx, p); err != nil {
			t.Fatalf("Confirmed(%q): %v", ref, err)
		}
		ids[ref] = p.ID
	}
	for _, ref := range outcometest.References {
		res, err := tr.Await(ctx, ref)
		if err != nil || res.State != outcome.StateCompleted || res.ID != ids[ref] {
			t.Fatalf("Await(%q) = %+v, %v; want payment %s completed", ref, res, err, ids[ref])
		}
		if o, err := tr.Get(ctx, ref); err != nil || o.Reference != ref || o.ConfirmedAt.IsZero() {
			t.Fatalf("Get(%q) = %+v, %v", ref, o, err)
		}
	}
	// Each spelling of a reference is its own: no normalisation.
	if o, err := tr.Get(ctx, outcometest.References[3]); err != nil || o.ID == ids[outcometest.References[2]] {
		t.Fatalf("the decomposed Yoruba reference found %+v, %v: want its own payment", o, err)
	}
	stuck, err := tr.Stuck(ctx, 0)
	if err != nil || len(stuck) != 0 {
		t.Fatalf("Stuck = %+v, %v; want none", stuck, err)
	}
	// Every attempt made so far was answered 200, and the function ran
	// once for each event answered (tracked or not).
	for _, d := range srv.Deliveries() {
		for _, a := range d.Attempts {
			if a.StatusCode != http.StatusOK {
				t.Fatalf("a delivery of %s (%s) was answered %d %s", d.EventID, d.Event, a.StatusCode, a.Error)
			}
			mu.Lock()
			n := calls[d.EventID]
			mu.Unlock()
			if n != 1 {
				t.Fatalf("event %s (%s): the function ran %d times, want 1", d.EventID, d.Event, n)
			}
		}
	}
}

func TestConfirmedBadInput(t *testing.T) {
	tr := outcome.NewTracker(nil)
	for _, p := range []*payments.Payment{nil, {}, {ID: "pay\n1"}, {ID: "pay-1", Reference: "order\x001"},
		{ID: "pay-1", Reference: strings.Repeat("ü", 256)}} {
		if err := tr.Confirmed(context.Background(), p); !errors.Is(err, outcome.ErrInvalidEvent) {
			t.Fatalf("Confirmed(%v) = %v, want ErrInvalidEvent", p, err)
		}
	}
	// Confirmed twice keeps the first time; a later final event ends it.
	now := time.Unix(1000, 0)
	tr = outcome.NewTracker(nil, outcome.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	p := &payments.Payment{ID: "pay-1", Reference: "order-1", Status: payments.PaymentStatusCompleted}
	_ = tr.Confirmed(ctx, p)
	now = now.Add(time.Hour)
	_ = tr.Confirmed(ctx, p)
	o, err := tr.Get(ctx, "order-1")
	if err != nil || !o.ConfirmedAt.Equal(time.Unix(1000, 0)) || o.State != outcome.StatePending {
		t.Fatalf("after Confirmed twice: %+v, %v (a response's status sets no final state)", o, err)
	}
}
