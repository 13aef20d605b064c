package outcome_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func ev(t *testing.T, id string, typ payments.EventType, subject string) *payments.Event {
	t.Helper()
	ref := "order-1"
	if strings.HasPrefix(string(typ), "recipient.") {
		ref = ""
	}
	return outcometest.Event(t, id, typ, subject, ref)
}

func raw(t *testing.T, body string) *payments.Event {
	t.Helper()
	e, err := payments.ParseEvent([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// decideAll applies events in order and returns the outcome and effects.
func decideAll(t *testing.T, events ...*payments.Event) (outcome.Outcome, []outcome.Effect) {
	t.Helper()
	var o outcome.Outcome
	var effects []outcome.Effect
	for i, e := range events {
		next, eff, err := outcome.Decide(o, e, time.Unix(int64(1000+i), 0))
		if err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		o = next
		effects = append(effects, eff)
	}
	return o, effects
}

func TestDecideForwardOnly(t *testing.T) {
	const p = "pay-1"
	cases := []struct {
		name    string
		events  []*payments.Event
		state   outcome.State
		effects string
		steps   int
	}{
		{"pending then completed", []*payments.Event{ev(t, "e1", payments.EventPaymentInitiated, p), ev(t, "e2", payments.EventPaymentCompleted, p)},
			outcome.StateCompleted, "forward forward", 2},
		{"final first, then a late initiated is recorded and ignored", []*payments.Event{ev(t, "e2", payments.EventPaymentFailed, p), ev(t, "e1", payments.EventPaymentInitiated, p)},
			outcome.StateFailed, "forward backward", 2},
		{"a duplicate is a no-op", []*payments.Event{ev(t, "e2", payments.EventPaymentRejected, p), ev(t, "e2", payments.EventPaymentRejected, p)},
			outcome.StateRejected, "forward none", 1},
		{"the same state again with the same flags writes nothing", []*payments.Event{ev(t, "e2", payments.EventPaymentCompleted, p), ev(t, "e3", payments.EventPaymentCompleted, p)},
			outcome.StateCompleted, "forward none", 1},
		{"two different finals: the first stands", []*payments.Event{ev(t, "e2", payments.EventPaymentCompleted, p), ev(t, "e3", payments.EventPaymentFailed, p)},
			outcome.StateCompleted, "forward conflict", 2},
		{"recipient verified", []*payments.Event{ev(t, "r1", payments.EventRecipientCreated, "rcp-1"), ev(t, "r2", payments.EventRecipientVerified, "rcp-1")},
			outcome.StateVerified, "forward forward", 2},
		{"recipient created late", []*payments.Event{ev(t, "r2", payments.EventRecipientVerificationFailed, "rcp-1"), ev(t, "r1", payments.EventRecipientCreated, "rcp-1")},
			outcome.StateVerificationFailed, "forward backward", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, effects := decideAll(t, c.events...)
			var got []string
			for _, e := range effects {
				got = append(got, string(e))
			}
			if o.State != c.state || strings.Join(got, " ") != c.effects || len(o.Steps) != c.steps {
				t.Fatalf("state %s, effects %q, %d steps; want %s, %q, %d", o.State, got, len(o.Steps), c.state, c.effects, c.steps)
			}
		})
	}
}

func TestDecideConflictNamesBothEvents(t *testing.T) {
	o, _ := decideAll(t, ev(t, "e1", payments.EventPaymentInitiated, "pay-1"), ev(t, "e2", payments.EventPaymentCompleted, "pay-1"),
		ev(t, "e3", payments.EventPaymentFailed, "pay-1"), ev(t, "e4", payments.EventPaymentRejected, "pay-1"))
	want := outcome.ConflictError{Kind: outcome.KindPayment, ID: "pay-1", FirstEvent: "e2", FirstState: outcome.StateCompleted, SecondEvent: "e3", SecondState: outcome.StateFailed}
	if o.Conflict == nil || *o.Conflict != want {
		t.Fatalf("conflict %+v, want %+v (the first conflict is kept)", o.Conflict, want)
	}
	if d, _ := o.Decided(); o.State != outcome.StateCompleted || d.EventID != "e2" {
		t.Fatalf("state %s decided by %s, want completed by e2", o.State, d.EventID)
	}
	msg := o.Conflict.Error()
	if !strings.Contains(msg, "e2 said completed") || !strings.Contains(msg, "e3 said failed") {
		t.Fatalf("message %q", msg)
	}
}

// The flags are kept as sent: a completed payment later sent reversed shows it.
func TestDecideKeepsFlagsAsSent(t *testing.T) {
	o, effects := decideAll(t,
		raw(t, `{"id":"e1","event":"payment.completed","data":{"id":"pay-1","status":"completed","is_completed":true}}`),
		raw(t, `{"id":"e2","event":"payment.completed","data":{"id":"pay-1","status":"completed","is_completed":true,"is_reversed":true}}`))
	if !o.IsCompleted || !o.IsReversed || effects[1] != outcome.EffectFlags || o.State != outcome.StateCompleted {
		t.Fatalf("outcome %+v, effects %v", o, effects)
	}
	if d, _ := o.Decided(); d.EventID != "e1" {
		t.Fatalf("decided by %s, want e1", d.EventID)
	}
}

func TestDecideUnknownKindsPassThrough(t *testing.T) {
	for _, body := range []string{
		`{"id":"e9","event":"payment.reversed","data":{"id":"pay-1","status":"reversed"}}`,
		`{"id":"e8","event":"virtual_account.created","data":{"id":"va-1"}}`,
		`{"id":"e7","event":"account.balance_low","data":null}`,
	} {
		e := raw(t, body)
		cur := outcome.Outcome{Kind: outcome.KindPayment, ID: "pay-1", State: outcome.StatePending}
		next, eff, err := outcome.Decide(cur, e, time.Now())
		if err != nil || eff != outcome.EffectNone || next.State != outcome.StatePending || len(next.Steps) != 0 {
			t.Fatalf("%s: %+v %s %v", e.Type, next, eff, err)
		}
		if outcome.Tracked(e.Type) {
			t.Fatalf("%s is tracked", e.Type)
		}
	}
}

func TestDecideBadInputMarksNothing(t *testing.T) {
	cases := map[string]string{
		"no data":              `{"id":"e1","event":"payment.completed"}`,
		"no payment id":        `{"id":"e1","event":"payment.completed","data":{"reference":"order-1","status":"completed"}}`,
		"empty payment id":     `{"id":"e1","event":"payment.failed","data":{"id":"","status":"failed"}}`,
		"numeric id":           `{"id":"e1","event":"payment.failed","data":{"id":12,"status":"failed"}}`,
		"status not a string":  `{"id":"e1","event":"payment.completed","data":{"id":"pay-1","status":{"x":1}}}`,
		"status with controls": `{"id":"e1","event":"payment.completed","data":{"id":"pay-1","status":"ok\u0000"}}`,
		"flag not a boolean":   `{"id":"e1","event":"payment.completed","data":{"id":"pay-1","is_reversed":"yes"}}`,
		"data not an object":   `{"id":"e1","event":"recipient.verified","data":[1,2]}`,
		"no recipient id":      `{"id":"e1","event":"recipient.verified","data":{"account_number":"0123456789"}}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			cur := outcome.Outcome{Kind: outcome.KindPayment, ID: "pay-1", State: outcome.StatePending}
			next, eff, err := outcome.Decide(cur, raw(t, body), time.Now())
			if !errors.Is(err, outcome.ErrInvalidEvent) || eff != outcome.EffectNone || next.State != outcome.StatePending || len(next.Steps) != 0 {
				t.Fatalf("Decide = %+v, %s, %v; want ErrInvalidEvent and nothing marked", next, eff, err)
			}
			if strings.Contains(err.Error(), "0123456789") || !strings.Contains(err.Error(), "e1") {
				t.Fatalf("error %q: must name the event and quote no data", err)
			}
		})
	}
	// An event about another payment than the record is refused too.
	cur := outcome.Outcome{Kind: outcome.KindPayment, ID: "pay-1", State: outcome.StatePending}
	if _, _, err := outcome.Decide(cur, ev(t, "e1", payments.EventPaymentCompleted, "pay-2"), time.Now()); !errors.Is(err, outcome.ErrInvalidEvent) {
		t.Fatalf("an event of another payment: %v", err)
	}
}

func TestStateFinal(t *testing.T) {
	final := map[outcome.State]bool{outcome.StateUnknown: false, outcome.StatePending: false, outcome.StateUnverified: false,
		outcome.StateCompleted: true, outcome.StateFailed: true, outcome.StateRejected: true,
		outcome.StateVerified: true, outcome.StateVerificationFailed: true, "settling": false}
	for s, want := range final {
		if s.Final() != want {
			t.Errorf("%q.Final() = %t", s, !want)
		}
	}
	if got := outcome.TrackedTypes(); len(got) != 7 {
		t.Fatalf("TrackedTypes = %v", got)
	}
}

// A payment with 300,000 step-making events stays one record of at most
// MaxSteps steps that keeps its deciding steps and its first conflict, and
// decides as before: the first final state stands, the first conflict is
// named, duplicates of the kept steps write nothing.
func TestDecideBoundedHistory(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 3 * outcome.MaxSteps
	}
	const p = "pay-1"
	o, _ := decideAll(t, ev(t, "init", payments.EventPaymentInitiated, p), ev(t, "done", payments.EventPaymentCompleted, p))
	now := time.Unix(5000, 0)
	late, fail := ev(t, "x", payments.EventPaymentInitiated, p), ev(t, "x", payments.EventPaymentFailed, p)
	var firstBackward string
	for i := 0; i < n; i++ {
		// A late initiated (backward) and a second final (conflict), each
		// a new event id: each makes a step.
		e := *late
		e.ID = fmt.Sprintf("late-%d", i)
		if i%2 == 1 {
			e = *fail
			e.ID = fmt.Sprintf("fail-%d", i)
		}
		if i == 0 {
			firstBackward = e.ID
		}
		next, eff, err := outcome.Decide(o, &e, now)
		if err != nil || eff == outcome.EffectNone {
			t.Fatalf("event %d: %s %v", i, eff, err)
		}
		o = next
		if len(o.Steps) > outcome.MaxSteps {
			t.Fatalf("after %d events: %d steps, more than MaxSteps %d", i+1, len(o.Steps), outcome.MaxSteps)
		}
	}
	if len(o.Steps) != outcome.MaxSteps || o.DroppedSteps != n+2-outcome.MaxSteps {
		t.Fatalf("%d steps, %d dropped; want %d and %d", len(o.Steps), o.DroppedSteps, outcome.MaxSteps, n+2-outcome.MaxSteps)
	}
	if o.State != outcome.StateCompleted || !o.IsCompleted {
		t.Fatalf("state %s, is_completed %t: the first final state must stand", o.State, o.IsCompleted)
	}
	if d, ok := o.Decided(); !ok || d.EventID != "done" {
		t.Fatalf("decided by %+v, want the step of done", d)
	}
	want := outcome.ConflictError{Kind: outcome.KindPayment, ID: p, FirstEvent: "done", FirstState: outcome.StateCompleted, SecondEvent: "fail-1", SecondState: outcome.StateFailed}
	if o.Conflict == nil || *o.Conflict != want {
		t.Fatalf("conflict %+v, want %+v", o.Conflict, want)
	}
	kept := map[string]outcome.Effect{}
	for _, s := range o.Steps {
		kept[s.EventID] = s.Effect
	}
	last := fmt.Sprintf("fail-%d", n-1)
	if kept["init"] != outcome.EffectForward || kept["done"] != outcome.EffectForward || kept["fail-1"] != outcome.EffectConflict || kept[last] != outcome.EffectConflict {
		t.Fatalf("kept steps %v: want init, done, fail-1 and the latest (%s)", kept, last)
	}
	// Duplicates of kept steps are recognised: nothing to write.
	for _, d := range []*payments.Event{ev(t, "init", payments.EventPaymentInitiated, p), ev(t, "done", payments.EventPaymentCompleted, p),
		ev(t, "fail-1", payments.EventPaymentFailed, p), ev(t, last, payments.EventPaymentFailed, p)} {
		if _, eff, err := outcome.Decide(o, d, now); err != nil || eff != outcome.EffectNone {
			t.Fatalf("duplicate %s: %s %v, want none", d.ID, eff, err)
		}
	}
	// A duplicate of a dropped step is decided as a late copy: recorded
	// again, the state and the conflict unchanged (documented at MaxSteps).
	again, eff, err := outcome.Decide(o, ev(t, firstBackward, payments.EventPaymentInitiated, p), now)
	if err != nil || eff != outcome.EffectBackward || again.State != outcome.StateCompleted || *again.Conflict != want || len(again.Steps) != outcome.MaxSteps {
		t.Fatalf("duplicate of a dropped step: %s %v, state %s, conflict %+v, %d steps", eff, err, again.State, again.Conflict, len(again.Steps))
	}
}

// A record written before the bound, with more steps than MaxSteps, is
// cut to MaxSteps by its next event.
func TestDecideTrimsAnOldLongRecord(t *testing.T) {
	o, _ := decideAll(t, ev(t, "init", payments.EventPaymentInitiated, "pay-1"), ev(t, "done", payments.EventPaymentCompleted, "pay-1"))
	for i := 0; i < 3*outcome.MaxSteps; i++ {
		o.Steps = append(o.Steps, outcome.Step{EventID: fmt.Sprintf("old-%d", i), EventType: payments.EventPaymentInitiated,
			State: outcome.StatePending, Effect: outcome.EffectBackward})
	}
	next, eff, err := outcome.Decide(o, ev(t, "new", payments.EventPaymentInitiated, "pay-1"), time.Now())
	if err != nil || eff != outcome.EffectBackward {
		t.Fatal(eff, err)
	}
	if len(next.Steps) != outcome.MaxSteps || next.DroppedSteps != 3*outcome.MaxSteps+3-outcome.MaxSteps {
		t.Fatalf("%d steps, %d dropped", len(next.Steps), next.DroppedSteps)
	}
	if d, _ := next.Decided(); d.EventID != "done" || next.Steps[len(next.Steps)-1].EventID != "new" {
		t.Fatalf("decided by %s, last step %s", d.EventID, next.Steps[len(next.Steps)-1].EventID)
	}
}

// Every reference the SDK sends is one the tracker records, and the tracker
// refuses only what the SDK refuses: both read one rule (internal/textrule),
// and this holds them to it through the SDK's public Confirm (its
// validation, before any byte leaves) and Decide.
func TestDecideReferencesTheSDKAccepts(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	refs := append(slices.Clone(outcometest.References),
		"order-1", strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("付", 256),
		strings.Repeat("Ọ", 255), "O"+strings.Repeat("\u0323", 255), // 256 characters: a mark counts as one
		"tab\there", "nul\x00", "nel\u0085", "del\x7f", "bidi\u202eexe.txt", "zwj-👩\u200d💻", "replacement-\ufffd", "  padded  ")
	for _, ref := range refs {
		_, err := client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: ref, QuoteID: "quote-1"})
		var ve *payments.ValidationError
		sdkAccepts := !errors.As(err, &ve)
		if !sdkAccepts && (len(ve.Fields) != 1 || ve.Fields[0].Field != "reference") {
			t.Fatalf("reference %q: %v, want a problem with the reference alone", ref, err)
		}
		body, _ := json.Marshal(map[string]any{"id": "e1", "event": "payment.completed",
			"data": map[string]any{"id": "pay-1", "reference": ref, "status": "completed"}})
		next, eff, err := outcome.Decide(outcome.Outcome{}, raw(t, string(body)), time.Now())
		tracked := err == nil && eff == outcome.EffectForward && next.Reference == ref
		if sdkAccepts != tracked {
			t.Errorf("reference %q (%d bytes): the SDK accepts it: %v; the tracker records it: %v (%v)", ref, len(ref), sdkAccepts, tracked, err)
		}
		if !tracked && (!errors.Is(err, outcome.ErrInvalidEvent) || strings.Contains(err.Error(), ref)) {
			t.Errorf("reference %q refused with %v: want ErrInvalidEvent, not quoting it", ref, err)
		}
	}
}
