package outcometest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/admintest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// Fake runs payments and recipients through paymentstest with delivery
// chaos (every event delivered twice, newest first, late) into two
// handlers, taken in turn, whose trackers share the replicas' stores. All
// of it happens with deliveries paused, so that on resume the fake sends,
// one at a time, every final event before the opening event of its
// subject. It checks that each payment's and recipient's final state is
// the fake's own, that the late opening events were recorded as backward
// and no observed state moved back, that the merchant's function ran once
// per event although the fake's log shows two deliveries of each, and
// that the duplicates wrote nothing (one step per event). The fake cannot
// send two different final events for one payment, so conflicts are left
// to Replicas.
func Fake(t *testing.T, open ReplicaOpener) {
	rs := open(t, slog.New(slog.DiscardHandler))
	ctx := Ctx(t)
	var mu sync.Mutex
	calls := map[string]int{}
	var handlers [2]http.Handler
	for i, r := range rs {
		tr := outcome.NewTracker(r.Outcomes)
		fn := func(_ context.Context, ev *payments.Event) error {
			mu.Lock()
			calls[ev.ID]++
			mu.Unlock()
			return nil
		}
		wrapped := tr.Wrap(fn)
		if r.Wrap != nil {
			wrapped = r.Wrap(tr, fn)
		}
		handlers[i] = webhook.NewHandler(Verifier(t), wrapped, webhook.WithClaimStore(r.Events))
	}
	var turn atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[turn.Add(1)%2].ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	chaos := paymentstest.Sandbox{DeliveryDelay: 20 * time.Millisecond, DeliveryDuplicate: true,
		DeliveryNewestFirst: true, WebhookConcurrency: 1,
		// AmountCompletesLate stays pending for SettlePayment, called
		// within milliseconds of the confirm; WaitForDeliveries waits out
		// the replaced late completion (which sends nothing).
		ProcessingDelay: 5 * time.Second}
	srv := paymentstest.NewServer(
		paymentstest.WithWebhook(paymentstest.Webhook{URL: front.URL, Secrets: []string{Secret},
			Retries: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}}),
		paymentstest.WithSandbox(chaos), // the admin API pauses and resumes deliveries
	)
	t.Cleanup(srv.Close)
	client := srv.Client()
	if err := admintest.PauseDeliveries(srv); err != nil {
		t.Fatal(err)
	}

	params := &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}
	good, err := client.Recipients.Create(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	params.AccountNumber = paymentstest.AccountNumberFailsVerification
	bad, err := client.Recipients.Create(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	recipients := map[string]outcome.State{good.ID: outcome.StateVerified, bad.ID: outcome.StateVerificationFailed}

	pay := func(amount string) *payments.Payment {
		p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount: payments.Amount{Decimal: decimal.RequireFromString(amount)}, Currency: "NGN", RecipientID: good.ID, Reference: NewID("order-"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if p, err = client.Payments.Confirm(ctx, p.ConfirmParams()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var paymentIDs []string
	for round := 0; round < 2; round++ {
		for _, amount := range []string{"1500.00", paymentstest.AmountFails, paymentstest.AmountRejected} {
			paymentIDs = append(paymentIDs, pay(amount).ID)
		}
		for _, status := range []payments.PaymentStatus{payments.PaymentStatusCompleted, payments.PaymentStatusFailed, payments.PaymentStatusRejected} {
			p := pay(paymentstest.AmountCompletesLate)
			if p.Status != payments.PaymentStatusPending {
				t.Fatalf("payment of %s: %s after confirm, want pending", paymentstest.AmountCompletesLate, p.Status)
			}
			if _, err := srv.SettlePayment(p.ID, status); err != nil {
				t.Fatal(err)
			}
			paymentIDs = append(paymentIDs, p.ID)
		}
	}
	want := map[string]outcome.State{}
	for id, st := range recipients {
		want[id] = st
	}
	for _, id := range paymentIDs {
		p, ok := srv.Payment(id)
		if !ok {
			t.Fatalf("the fake has no payment %s", id)
		}
		want[id] = outcome.State(p.Status)
		if !want[id].Final() {
			t.Fatalf("payment %s is %s in the fake, want a final state", id, p.Status)
		}
	}

	// The watcher reads every subject from the other replica's store while
	// deliveries run: a final state, once seen, must never change.
	stop := make(chan struct{})
	watched := make(chan error, 1)
	go func() {
		seen := map[string]outcome.State{}
		for {
			for id := range want {
				o, err := rs[1].Outcomes.Load(ctx, id)
				if err != nil {
					continue
				}
				if was, ok := seen[id]; ok && was != o.State {
					watched <- fmt.Errorf("%s moved from %s to %s", id, was, o.State)
					return
				}
				if o.State.Final() {
					seen[id] = o.State
				}
			}
			select {
			case <-stop:
				watched <- nil
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	// Every first attempt is due once Delay has passed since the last
	// event: then all are due at the resume, and go newest first.
	time.Sleep(chaos.DeliveryDelay)
	if err := admintest.ResumeDeliveries(srv); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := <-watched; err != nil {
		t.Fatal(err)
	}

	// The fake's log: two delivered deliveries of every event.
	events := srv.Events()
	delivered := map[string]int{}
	for _, d := range srv.Deliveries() {
		if d.Status == paymentstest.DeliveryDelivered {
			delivered[d.EventID]++
		}
	}
	bySubject := map[string][]string{}
	for _, e := range events {
		if n := delivered[e.ID]; n != 2 {
			t.Errorf("event %s (%s) delivered %d times, want twice", e.ID, e.Type, n)
		}
		mu.Lock()
		n := calls[e.ID]
		mu.Unlock()
		if n != 1 {
			t.Errorf("event %s (%s) reached the function %d times, want once", e.ID, e.Type, n)
		}
		ev, err := payments.ParseEvent(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok, err := outcome.SubjectOf(ev); err != nil || !ok {
			t.Fatalf("event %s (%s): no subject: %v", e.ID, e.Type, err)
		} else {
			bySubject[s.ID] = append(bySubject[s.ID], e.ID)
		}
	}

	for id, st := range want {
		o, err := rs[0].Outcomes.Load(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if o.State != st {
			t.Errorf("%s ended %s, the fake says %s (steps %+v)", id, o.State, st, o.Steps)
		}
		if o.Conflict != nil {
			t.Errorf("%s: unexpected conflict %v", id, o.Conflict)
		}
		if p, ok := srv.Payment(id); ok && o.IsCompleted != p.IsCompleted {
			t.Errorf("%s: is_completed %v, the fake says %v", id, o.IsCompleted, p.IsCompleted)
		}
		if len(o.Steps) != len(bySubject[id]) || len(bySubject[id]) != 2 {
			t.Errorf("%s: %d steps for the fake's %d events, want 2: a duplicate was recorded or an event lost", id, len(o.Steps), len(bySubject[id]))
			continue
		}
		// Newest first: the final event came first, the opening one
		// late, recorded as backward; the state stayed final.
		if first, late := o.Steps[0], o.Steps[1]; first.State != st || first.Effect != outcome.EffectForward ||
			late.State.Final() || late.Effect != outcome.EffectBackward {
			t.Errorf("%s: steps %+v, want the final %s forward, then the opening event backward", id, o.Steps, st)
		}
	}
	t.Logf("%d events about %d subjects, %d deliveries", len(events), len(want), len(srv.Deliveries()))
}
