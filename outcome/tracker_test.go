package outcome_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
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

// An event the tracker cannot read: 500 (the service retries; the handler
// logs why), the function is not called, nothing is marked.
func TestWrapInvalidEvent(t *testing.T) {
	var logs bytes.Buffer
	s := &downStore{Store: outcome.NewMemoryStore()}
	tr := outcome.NewTracker(s, outcome.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	h, calls := handler(t, tr, nil)
	body := []byte(`{"id":"ev-1","event":"payment.completed","data":{"status":"completed","account_number":"0123456789"}}`)
	if code := outcometest.Deliver(h, body); code != http.StatusInternalServerError || calls["ev-1"] != 0 || s.writes.Load() != 0 {
		t.Fatalf("answered %d, %d calls, %d writes; want 500, 0, 0", code, calls["ev-1"], s.writes.Load())
	}
	recs := outcometest.Records(t, logs.String(), "outcome: event not recorded")
	if len(recs) != 1 || recs[0]["event_id"] != "ev-1" || !strings.Contains(recs[0]["error"].(string), "no payment id") {
		t.Fatalf("log: %s", logs.String())
	}
	if strings.Contains(logs.String(), "0123456789") {
		t.Fatal("the log repeats the event's data")
	}
}

func TestConfirmedBadInput(t *testing.T) {
	tr := outcome.NewTracker(nil)
	for _, p := range []*payments.Payment{nil, {}, {ID: "pay\n1"}} {
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
