// Package outcometest holds the tests and benchmarks every outcome.Store
// passes (the memory store in package outcome, pgstore's and redisstore's in
// their modules), so that each store is held to one set of rules.
package outcometest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/paymentsapi/payments-go/internal/testhook"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// Secret signs the deliveries of these tests.
const Secret = "outcometest-secret"

// Verifier verifies deliveries signed with Secret.
func Verifier(tb testing.TB) *webhook.SignatureVerifier {
	tb.Helper()
	v, err := webhook.NewSignatureVerifier([]string{Secret})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Deliver signs body now and posts it to h, as the service would, and
// returns the status.
func Deliver(h http.Handler, body []byte) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), Secret))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// NewID returns a random id with prefix.
func NewID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Body is the webhook body of an event of kind typ about resource id (a
// payment with reference ref, or a recipient when ref is "").
func Body(eventID string, typ payments.EventType, id, ref string) []byte {
	data := map[string]any{"id": id}
	if ref != "" {
		status := map[payments.EventType]string{
			payments.EventPaymentInitiated: "pending", payments.EventPaymentCompleted: "completed",
			payments.EventPaymentFailed: "failed", payments.EventPaymentRejected: "rejected",
		}[typ]
		data["reference"], data["status"] = ref, status
		data["is_completed"] = typ == payments.EventPaymentCompleted
		data["amount"], data["currency"] = "1500.00", "NGN"
	}
	b, _ := json.Marshal(map[string]any{"id": eventID, "event": typ,
		"created_at": time.Now().UTC().Format(time.RFC3339Nano), "data": data})
	return b
}

// Event parses Body's result.
func Event(tb testing.TB, eventID string, typ payments.EventType, id, ref string) *payments.Event {
	tb.Helper()
	ev, err := payments.ParseEvent(Body(eventID, typ, id, ref))
	if err != nil {
		tb.Fatal(err)
	}
	return ev
}

// Ctx is a context that ends with the test (or after two minutes).
func Ctx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// Opener returns two stores over one fresh shared backing (two replicas'
// view of it).
type Opener func(tb testing.TB) [2]outcome.Store

// Conformance checks the Store contract on a backing shared by two stores.
func Conformance(t *testing.T, open Opener) {
	t.Run("LoadUnknown", func(t *testing.T) {
		s := open(t)
		if _, err := s[0].Load(Ctx(t), "pay-none"); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("Load of an unknown id: %v, want ErrNotFound", err)
		}
	})
	t.Run("UpdateThenLoadByIDAndReference", func(t *testing.T) {
		s := open(t)
		ctx := Ctx(t)
		tr := outcome.NewTracker(s[0])
		id, ref := NewID("pay-"), NewID("order-")
		if _, _, err := tr.Apply(ctx, Event(t, "ev-1", payments.EventPaymentCompleted, id, ref)); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{id, ref} {
			o, err := s[1].Load(ctx, key)
			if err != nil {
				t.Fatalf("Load(%s) from the other replica: %v", key, err)
			}
			if o.ID != id || o.Reference != ref || o.State != outcome.StateCompleted || len(o.Steps) != 1 || o.Steps[0].EventID != "ev-1" {
				t.Fatalf("Load(%s) = %+v", key, o)
			}
		}
	})
	t.Run("ReferenceReusedAfterAnExpiredQuote", func(t *testing.T) {
		s := open(t)
		ctx := Ctx(t)
		clock := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		tr := outcome.NewTracker(s[0], trackerClock(func() time.Time { return clock }))
		ref, expired, paid, later := NewID("order-"), NewID("pay-a-"), NewID("pay-b-"), NewID("pay-c-")
		apply := func(typ payments.EventType, id string) {
			clock = clock.Add(time.Second)
			if _, _, err := tr.Apply(ctx, Event(t, NewID("ev-"), typ, id, ref)); err != nil {
				t.Fatal(err)
			}
		}
		load := func() string {
			o, err := s[1].Load(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			return o.ID
		}
		apply(payments.EventPaymentInitiated, expired)
		apply(payments.EventPaymentInitiated, paid)
		if got := load(); got != paid {
			t.Fatalf("two open payments: Load(reference) = %s, want the later %s", got, paid)
		}
		if err := tr.Confirmed(ctx, &payments.Payment{ID: paid, Reference: ref}); err != nil {
			t.Fatal(err)
		}
		apply(payments.EventPaymentInitiated, later)
		if got := load(); got != paid {
			t.Fatalf("a confirmed payment and a later open one: Load(reference) = %s, want the confirmed %s", got, paid)
		}
		apply(payments.EventPaymentFailed, expired)
		if got := load(); got != expired {
			t.Fatalf("a final payment: Load(reference) = %s, want %s", got, expired)
		}
	})
	t.Run("NoWriteWhenFnSaysSo", func(t *testing.T) {
		s := open(t)
		ctx := Ctx(t)
		id := NewID("pay-")
		sentinel := errors.New("refused")
		_, err := s[0].Update(ctx, id, func(cur outcome.Outcome) (outcome.Outcome, bool, error) {
			return outcome.Outcome{Kind: outcome.KindPayment, ID: id, State: outcome.StatePending}, false, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s[0].Update(ctx, id, func(cur outcome.Outcome) (outcome.Outcome, bool, error) {
			return outcome.Outcome{Kind: outcome.KindPayment, ID: id, State: outcome.StatePending}, true, sentinel
		})
		if !errors.Is(err, sentinel) {
			t.Fatalf("Update returned %v, want fn's error", err)
		}
		if _, err := s[1].Load(ctx, id); !errors.Is(err, outcome.ErrNotFound) {
			t.Fatalf("after updates that wrote nothing, Load: %v, want ErrNotFound", err)
		}
	})
	t.Run("ConcurrentUpdatesFromTwoReplicasAllLand", func(t *testing.T) {
		s := open(t)
		ctx := Ctx(t)
		id := NewID("pay-")
		const n = 40
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s[i%2].Update(ctx, id, func(cur outcome.Outcome) (outcome.Outcome, bool, error) {
					cur.Kind, cur.ID, cur.State = outcome.KindPayment, id, outcome.StatePending
					cur.Steps = append(cur.Steps, outcome.Step{EventID: NewID("ev-")})
					return cur, true, nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		o, err := s[0].Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Steps) != n {
			t.Fatalf("%d steps after %d concurrent updates: an update was lost", len(o.Steps), n)
		}
	})
	t.Run("Open", func(t *testing.T) {
		s := open(t)
		ctx := Ctx(t)
		now := time.Now().UTC().Truncate(time.Millisecond)
		clock := now.Add(-2 * time.Hour)
		tr := outcome.NewTracker(s[0], trackerClock(func() time.Time { return clock }))
		old, done, fresh, unconfirmed := NewID("pay-old-"), NewID("pay-done-"), NewID("pay-new-"), NewID("pay-q-")
		rcpt, verified := NewID("rcp-"), NewID("rcp-ok-")
		for _, id := range []string{old, done} {
			if err := tr.Confirmed(ctx, &payments.Payment{ID: id, Reference: "r-" + id}); err != nil {
				t.Fatal(err)
			}
		}
		apply := func(typ payments.EventType, id, ref string) {
			if _, _, err := tr.Apply(ctx, Event(t, NewID("ev-"), typ, id, ref)); err != nil {
				t.Fatal(err)
			}
		}
		clock = clock.Add(time.Second)
		apply(payments.EventPaymentInitiated, unconfirmed, "r-q")
		apply(payments.EventPaymentCompleted, done, "r-"+done)
		clock = clock.Add(time.Second)
		apply(payments.EventRecipientCreated, rcpt, "")
		apply(payments.EventRecipientCreated, verified, "")
		apply(payments.EventRecipientVerified, verified, "")
		clock = now
		if err := tr.Confirmed(ctx, &payments.Payment{ID: fresh, Reference: "r-" + fresh}); err != nil {
			t.Fatal(err)
		}
		apply(payments.EventPaymentInitiated, NewID("pay-fresh-q-"), "r-fq")
		got, err := outcome.NewTracker(s[1], trackerClock(func() time.Time { return now })).Stuck(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range got {
			ids = append(ids, o.ID)
		}
		// Oldest first: the unconfirmed payment and the recipient were
		// first seen after old's confirmation, in that order; fresh
		// (confirmed now) and freshQuote (first seen now) are too recent.
		want := []string{old, unconfirmed, rcpt}
		if strings.Join(ids, " ") != strings.Join(want, " ") {
			t.Fatalf("Stuck = %v, want %v", ids, want)
		}
		if !got[1].ConfirmedAt.IsZero() || got[1].State != outcome.StatePending || len(got[1].Steps) != 1 {
			t.Fatalf("the payment never confirmed: %+v, want pending with ConfirmedAt zero and its one step", got[1])
		}
	})
	t.Run("BoundedHistory", func(t *testing.T) { boundedHistory(t, open(t)) })
	t.Run("References", func(t *testing.T) { references(t, open(t)) })
	t.Run("CancelledContext", func(t *testing.T) {
		s := open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s[0].Load(ctx, "x"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Load with a cancelled context: %v", err)
		}
		_, err := s[0].Update(ctx, "x", func(o outcome.Outcome) (outcome.Outcome, bool, error) { return o, true, nil })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Update with a cancelled context: %v", err)
		}
	})
}

// StuckFixture records, through tr (whose clock it moves), a payment
// confirmed two hours ago without an outcome, a recipient first seen then
// and still unverified, and a completed payment and a verified recipient;
// it returns the ids of the two stuck ones.
func StuckFixture(t *testing.T, s outcome.Store) (payment, recipient string) {
	t.Helper()
	ctx := Ctx(t)
	clock := time.Now().Add(-2 * time.Hour)
	tr := outcome.NewTracker(s, trackerClock(func() time.Time { return clock }))
	payment, recipient = NewID("pay-stuck-"), NewID("rcp-stuck-")
	done, verified := NewID("pay-done-"), NewID("rcp-ok-")
	for _, id := range []string{payment, done} {
		if err := tr.Confirmed(ctx, &payments.Payment{ID: id, Reference: "ref-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []*payments.Event{
		Event(t, NewID("ev-"), payments.EventPaymentCompleted, done, "ref-"+done),
		Event(t, NewID("ev-"), payments.EventRecipientCreated, recipient, ""),
		Event(t, NewID("ev-"), payments.EventRecipientCreated, verified, ""),
		Event(t, NewID("ev-"), payments.EventRecipientVerified, verified, ""),
	} {
		if _, _, err := tr.Apply(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	return payment, recipient
}

// boundedHistory feeds a payment three times MaxSteps step-making events
// through the store's Update (a tracker's Apply) and checks the record
// another replica loads: at most MaxSteps steps, the dropped ones
// counted, the first final state and the first conflict kept, and
// duplicates of kept steps recognised.
func boundedHistory(t *testing.T, s [2]outcome.Store) {
	ctx := Ctx(t)
	tr := outcome.NewTracker(s[0])
	id, ref := NewID("pay-"), NewID("order-")
	apply := func(evID string, typ payments.EventType, want outcome.Effect) {
		t.Helper()
		if _, eff, err := tr.Apply(ctx, Event(t, evID, typ, id, ref)); err != nil || eff != want {
			t.Fatalf("event %s (%s): %s %v, want %s", evID, typ, eff, err, want)
		}
	}
	apply("init", payments.EventPaymentInitiated, outcome.EffectForward)
	apply("done", payments.EventPaymentCompleted, outcome.EffectForward)
	n := 3 * outcome.MaxSteps
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			apply("late-"+strconv.Itoa(i), payments.EventPaymentInitiated, outcome.EffectBackward)
		} else {
			apply("fail-"+strconv.Itoa(i), payments.EventPaymentFailed, outcome.EffectConflict)
		}
	}
	last := "fail-" + strconv.Itoa(n-1)
	for _, d := range []struct {
		id  string
		typ payments.EventType
	}{{"init", payments.EventPaymentInitiated}, {"done", payments.EventPaymentCompleted}, {"fail-1", payments.EventPaymentFailed}, {last, payments.EventPaymentFailed}} {
		apply(d.id, d.typ, outcome.EffectNone)
	}
	o, err := s[1].Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Steps) != outcome.MaxSteps || o.DroppedSteps != n+2-outcome.MaxSteps {
		t.Fatalf("%d steps, %d dropped; want %d and %d", len(o.Steps), o.DroppedSteps, outcome.MaxSteps, n+2-outcome.MaxSteps)
	}
	if d, _ := o.Decided(); o.State != outcome.StateCompleted || d.EventID != "done" {
		t.Fatalf("state %s decided by %q, want completed by done", o.State, d.EventID)
	}
	if o.Conflict == nil || o.Conflict.FirstEvent != "done" || o.Conflict.SecondEvent != "fail-1" {
		t.Fatalf("conflict %+v, want done then fail-1", o.Conflict)
	}
	if o.Steps[0].EventID != "init" || o.Steps[len(o.Steps)-1].EventID != last {
		t.Fatalf("steps from %s to %s, want from init to %s", o.Steps[0].EventID, o.Steps[len(o.Steps)-1].EventID, last)
	}
}

// References are references a merchant may give a payment, each accepted
// by the SDK: German, French, Yoruba (precomposed dots below, then an O with
// a combining dot below and a combining tone), Chinese, and the longest the
// SDK accepts, 255 characters of 3 bytes each.
var References = []string{
	"Zahlung-Müller-42",
	"Café-Crème-7",
	"Ọmọ-Ọba-9",
	"O\u0323mo\u0323\u0301-O\u0323ba-9",
	"付款-北京-42",
	strings.Repeat("付", 255),
}

// references records a payment with each of References through a tracker
// on one replica (its events and its confirmation) and loads it from the
// other by id and by reference, exactly as sent; Stuck lists none of them.
func references(t *testing.T, s [2]outcome.Store) {
	ctx := Ctx(t)
	tr := outcome.NewTracker(s[0])
	ids := map[string]string{}
	for _, ref := range References {
		id := NewID("pay-")
		ids[ref] = id
		for _, typ := range []payments.EventType{payments.EventPaymentInitiated, payments.EventPaymentCompleted} {
			if _, eff, err := tr.Apply(ctx, Event(t, NewID("ev-"), typ, id, ref)); err != nil || eff != outcome.EffectForward {
				t.Fatalf("%s of %q: %s, %v; want forward", typ, ref, eff, err)
			}
			if typ == payments.EventPaymentInitiated {
				if err := tr.Confirmed(ctx, &payments.Payment{ID: id, Reference: ref}); err != nil {
					t.Fatalf("Confirmed(%q): %v", ref, err)
				}
			}
		}
	}
	for _, ref := range References {
		for _, key := range []string{ids[ref], ref} {
			o, err := s[1].Load(ctx, key)
			if err != nil || o.ID != ids[ref] || o.Reference != ref || o.State != outcome.StateCompleted || len(o.Steps) != 2 {
				t.Fatalf("Load(%q) from the other replica = %+v, %v; want payment %s, reference %q, completed", key, o, err, ids[ref], ref)
			}
		}
	}
	got, err := outcome.NewTracker(s[1]).Stuck(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range got {
		if o.Kind == outcome.KindPayment && ids[o.Reference] == o.ID {
			t.Fatalf("Stuck lists %+v", o)
		}
	}
}

// trackerClock is the tracker's test clock (internal/testhook: the outcome
// package exports none).
func trackerClock(now func() time.Time) outcome.Option {
	return testhook.TrackerClock(now).(outcome.Option)
}

// PollInterval sets the longest wait between two reads of the store by a
// tracker's Await (internal/testhook: the outcome package exports no such
// option; DefaultPollInterval serves merchants).
func PollInterval(d time.Duration) outcome.Option {
	return testhook.TrackerPollInterval(d).(outcome.Option)
}
