package outcome_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

type awaited struct {
	res outcome.Result
	err error
}

func awaitAsync(ctx context.Context, tr *outcome.Tracker, key string) <-chan awaited {
	ch := make(chan awaited, 1)
	go func() {
		res, err := tr.Await(ctx, key)
		ch <- awaited{res, err}
	}()
	return ch
}

// Await in one tracker returns when a delivery reaches another tracker on
// the same store (two replicas of one process: the waiter polls), by id
// and by reference, with the deciding event; the pending event before it
// does not end the wait.
func TestAwaitAnotherReplica(t *testing.T) {
	store := outcome.NewMemoryStore()
	receiver := outcome.NewTracker(store)
	waiter := outcome.NewTracker(store, outcome.WithPollInterval(20*time.Millisecond))
	h, _ := handler(t, receiver, nil)
	ctx := outcometest.Ctx(t)
	byID, byRef := awaitAsync(ctx, waiter, "pay-1"), awaitAsync(ctx, waiter, "order-1")
	if code := outcometest.Deliver(h, outcometest.Body("ev-1", payments.EventPaymentInitiated, "pay-1", "order-1")); code != http.StatusOK {
		t.Fatal(code)
	}
	select {
	case a := <-byID:
		t.Fatalf("Await returned on a pending payment: %+v %v", a.res, a.err)
	case <-time.After(100 * time.Millisecond):
	}
	if code := outcometest.Deliver(h, outcometest.Body("ev-2", payments.EventPaymentRejected, "pay-1", "order-1")); code != http.StatusOK {
		t.Fatal(code)
	}
	for _, ch := range []<-chan awaited{byID, byRef} {
		a := <-ch
		if a.err != nil || a.res.State != outcome.StateRejected || a.res.EventID != "ev-2" || a.res.ID != "pay-1" ||
			a.res.Reference != "order-1" || a.res.EventType != payments.EventPaymentRejected || a.res.RecordedAt.IsZero() {
			t.Fatalf("Await = %+v, %v", a.res, a.err)
		}
	}
}

// An id never seen: Await waits until the context ends, and says so.
func TestAwaitUnknownWaitsForContext(t *testing.T) {
	tr := outcome.NewTracker(nil, outcome.WithPollInterval(5*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := tr.Await(ctx, "pay-never")
	if !errors.Is(err, context.DeadlineExceeded) || res.State != outcome.StateUnknown {
		t.Fatalf("Await = %+v, %v; want no state and the context's error", res, err)
	}
	if !strings.Contains(err.Error(), "no final outcome for pay-never") || !strings.Contains(err.Error(), "Await again later") {
		t.Fatalf("Await's error %q does not say what to do", err)
	}
	if _, err := tr.Await(context.Background(), ""); !errors.Is(err, outcome.ErrInvalidEvent) {
		t.Fatalf("Await(\"\") = %v", err)
	}
}

// Conflicting finals: Await returns the first with a *ConflictError.
func TestAwaitConflict(t *testing.T) {
	tr := outcome.NewTracker(nil)
	ctx := outcometest.Ctx(t)
	for _, e := range []*payments.Event{
		outcometest.Event(t, "ev-2", payments.EventPaymentCompleted, "pay-1", "order-1"),
		outcometest.Event(t, "ev-3", payments.EventPaymentFailed, "pay-1", "order-1"),
	} {
		if _, _, err := tr.Apply(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tr.Await(ctx, "pay-1")
	var ce *outcome.ConflictError
	if !errors.As(err, &ce) || ce.FirstEvent != "ev-2" || ce.SecondEvent != "ev-3" || res.State != outcome.StateCompleted || res.EventID != "ev-2" {
		t.Fatalf("Await = %+v, %v", res, err)
	}
}

// failingStore fails every Load.
type failingStore struct{ outcome.Store }

func (failingStore) Load(context.Context, string) (outcome.Outcome, error) {
	return outcome.Outcome{}, errors.New("connection refused")
}

// A store that fails: Await keeps reading until its context ends, then
// says both.
func TestAwaitStoreDown(t *testing.T) {
	tr := outcome.NewTracker(failingStore{outcome.NewMemoryStore()}, outcome.WithPollInterval(5*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := tr.Await(ctx, "pay-1")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Await = %v", err)
	}
}

// fakePayment makes a verified recipient and a confirmed payment of amount
// on srv, and returns the payment and the recipient's id.
func fakePayment(t *testing.T, srv *paymentstest.Server, ref, amount string) (*payments.Payment, string) {
	t.Helper()
	ctx := outcometest.Ctx(t)
	client := srv.Client()
	r, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString(amount)},
		Currency: "NGN", RecipientID: r.ID, Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = client.Payments.Confirm(ctx, p.ConfirmParams()); err != nil {
		t.Fatal(err)
	}
	return p, r.ID
}

func eventOf(t *testing.T, srv *paymentstest.Server, typ payments.EventType) paymentstest.Event {
	t.Helper()
	for _, e := range srv.Events() {
		if e.Type == typ {
			return e
		}
	}
	t.Fatalf("the fake has no %s event", typ)
	return paymentstest.Event{}
}

// With deliveries off, Await learns the outcome from the event list, runs
// it through the handler's Reconcile (so the merchant's function sees it
// once), and a late delivery of the same event counts as a duplicate.
func TestAwaitThroughEventList(t *testing.T) {
	srv := paymentstest.NewServer() // no webhook URL: nothing is delivered
	defer srv.Close()
	p, rcpt := fakePayment(t, srv, "order-7", paymentstest.AmountFails)
	tr := outcome.NewTracker(nil, outcome.WithEventList(srv.Client(), 20*time.Millisecond))
	h, calls := handler(t, tr, nil) // tr.NewHandler: Await lists through it
	ctx := outcometest.Ctx(t)

	res, err := tr.Await(ctx, "order-7")
	failed := eventOf(t, srv, payments.EventPaymentFailed)
	if err != nil || res.State != outcome.StateFailed || res.ID != p.ID || res.EventID != failed.ID {
		t.Fatalf("Await = %+v, %v; want failed by %s", res, err, failed.ID)
	}
	res, err = tr.Await(ctx, rcpt)
	if err != nil || res.State != outcome.StateVerified || res.Kind != outcome.KindRecipient {
		t.Fatalf("Await(recipient) = %+v, %v", res, err)
	}
	if code := outcometest.Deliver(h, failed.Body); code != http.StatusOK {
		t.Fatalf("late delivery answered %d", code)
	}
	o, _ := tr.Get(ctx, p.ID)
	if calls[failed.ID] != 1 || len(o.Steps) != 2 {
		t.Fatalf("%d calls of the function for %s, %d steps (%+v); want 1 and 2", calls[failed.ID], failed.ID, len(o.Steps), o.Steps)
	}
}

// WithReconcile's function gets the listed events, and a handler that
// NewHandler makes afterwards does not replace it (pgstore's Queue.Tracker
// relies on both).
func TestAwaitThroughWithReconcile(t *testing.T) {
	srv := paymentstest.NewServer() // no webhook URL: nothing is delivered
	defer srv.Close()
	p, _ := fakePayment(t, srv, "order-9", paymentstest.AmountFails)
	var tr *outcome.Tracker
	var listed int
	reconcile := func(ctx context.Context, evs iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error) {
		var res webhook.ReconcileResult
		for ev, err := range evs {
			if err != nil {
				return res, err
			}
			listed++
			if _, _, err := tr.Apply(ctx, ev); err != nil {
				return res, err
			}
			res.Processed++
		}
		return res, nil
	}
	tr = outcome.NewTracker(nil, outcome.WithEventList(srv.Client(), 20*time.Millisecond), outcome.WithReconcile(reconcile))
	_, calls := handler(t, tr, nil)

	res, err := tr.Await(outcometest.Ctx(t), p.ID)
	if err != nil || res.State != outcome.StateFailed {
		t.Fatalf("Await = %+v, %v; want failed", res, err)
	}
	if listed == 0 || len(calls) != 0 {
		t.Fatalf("WithReconcile's function saw %d events, the handler's function %d; want > 0 and 0", listed, len(calls))
	}
}

// With deliveries on, the fake's payment.completed reaches the handler and
// Await returns without listing.
func TestAwaitThroughDelivery(t *testing.T) {
	tr := outcome.NewTracker(nil)
	h := webhook.NewHandler(mustVerifier(t), tr.Wrap(nil))
	recv := httptest.NewServer(h)
	defer recv.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: recv.URL, Secrets: []string{"whsec-outcome"}}))
	defer srv.Close()
	p, _ := fakePayment(t, srv, "order-8", paymentstest.AmountCompletesLate)
	if err := tr.Confirmed(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	res, err := tr.Await(outcometest.Ctx(t), p.ID)
	if err != nil || res.State != outcome.StateCompleted || !res.IsCompleted || res.EventID != eventOf(t, srv, payments.EventPaymentCompleted).ID {
		t.Fatalf("Await = %+v, %v", res, err)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/webhooks/events" {
			t.Fatal("Await listed events without WithEventList")
		}
	}
}

func mustVerifier(t *testing.T) webhook.Verifier {
	v, err := webhook.NewSignatureVerifier([]string{"whsec-outcome"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// brokenSubscriber is a MemoryStore whose subscription always fails.
type brokenSubscriber struct{ *outcome.MemoryStore }

func (brokenSubscriber) Subscribe(context.Context, func()) error {
	return errors.New("no pub/sub here")
}

// A subscription that fails is logged and retried; Await returns by
// polling meanwhile.
func TestAwaitSubscriptionFailsPollsInstead(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	store := outcome.NewMemoryStore()
	waiter := outcome.NewTracker(brokenSubscriber{store}, outcome.WithPollInterval(20*time.Millisecond), outcome.WithLogger(logger))
	ctx := outcometest.Ctx(t)
	ch := awaitAsync(ctx, waiter, "pay-1")
	if _, _, err := outcome.NewTracker(store).Apply(ctx, outcometest.Event(t, "ev-1", payments.EventPaymentCompleted, "pay-1", "order-1")); err != nil {
		t.Fatal(err)
	}
	if a := <-ch; a.err != nil || a.res.EventID != "ev-1" {
		t.Fatalf("Await = %+v, %v", a.res, a.err)
	}
	logged := func() (string, bool) { // by the subscription's goroutine, maybe after Await returned
		mu.Lock()
		defer mu.Unlock()
		return logs.String(), strings.Contains(logs.String(), "subscription to the store failed") && strings.Contains(logs.String(), "no pub/sub here")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		text, ok := logged()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log: %s", text)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
