package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

const secret = "whsec_pgqueue_example"

// answers records when the receiver answered each event's delivery.
type answers struct {
	mu    sync.Mutex
	at    map[string][]time.Time
	codes map[int]int
}

func (a *answers) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		if r.URL.Path != "/webhooks" {
			return
		}
		var ev struct{ ID string }
		_ = json.Unmarshal(body, &ev)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.at[ev.ID] = append(a.at[ev.ID], time.Now())
		a.codes[rec.code]++
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// A receiver process, a worker process whose function takes 2 s, and a
// third process awaiting outcomes, against the fake service sending real
// deliveries: every delivery is answered 200 on its first attempt before
// the function of its event ended; every event is booked once; Await
// answers a final state only once the order row saying so is committed.
func TestReceiverWorkerAndAwait(t *testing.T) {
	dbURL := testDB(t)
	receiving := process(t, dbURL, nil)
	var c calls
	working := process(t, dbURL, c.fn())
	awaiting := process(t, dbURL, nil)

	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	mux, h := receiving.receiver(verifier)
	ans := &answers{at: map[string][]time.Time{}, codes: map[int]int{}}
	receiver := httptest.NewServer(ans.wrap(mux))
	defer receiver.Close()
	defer func() { _ = h.Shutdown(context.Background()) }()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL + "/webhooks", Secrets: []string{secret}}))
	defer srv.Close()
	client := srv.Client()
	startWorker(t, working, client, time.Hour)

	health, err := http.Get(receiver.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = health.Body.Close()
	if health.StatusCode != http.StatusOK {
		t.Fatalf("/healthz answered %d", health.StatusCode)
	}

	want := map[string]outcome.State{"order-1": outcome.StateCompleted, "order-2": outcome.StateFailed, "order-3": outcome.StateRejected}
	amounts := map[string]string{"order-1": "2500.00", "order-2": paymentstest.AmountFails, "order-3": paymentstest.AmountRejected}
	type awaited struct {
		ref string
		res outcome.Result
		err error
		at  time.Time
		row string // the order's status and deciding event as read at once
	}
	results := make(chan awaited, len(want))
	for ref := range want {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			res, err := awaiting.await(ctx, client, time.Hour, ref) // no event list: deliveries only
			got := awaited{ref: ref, res: res, err: err, at: time.Now()}
			var status, eventID string
			if err == nil {
				if qerr := awaiting.pool.QueryRow(context.Background(),
					`SELECT status, event_id FROM orders WHERE reference = $1`, ref).Scan(&status, &eventID); qerr != nil {
					got.row = "no order row: " + qerr.Error()
				} else {
					got.row = status + " " + eventID
				}
			}
			results <- got
		}()
	}
	for ref, amount := range amounts {
		pay(t, client, ref, amount)
	}
	for range want {
		r := <-results
		if r.err != nil {
			t.Fatalf("Await(%s): %v", r.ref, r.err)
		}
		if r.res.State != want[r.ref] {
			t.Errorf("Await(%s) = %s, want %s", r.ref, r.res.State, want[r.ref])
		}
		if r.row != string(r.res.State)+" "+r.res.EventID {
			t.Errorf("Await(%s) answered %s %s while the order row read %q", r.ref, r.res.State, r.res.EventID, r.row)
		}
		if ended, ok := c.endedAt(r.res.EventID); !ok || r.at.Before(ended) {
			t.Errorf("Await(%s) answered before the function of %s ended (%v)", r.ref, r.res.EventID, ended)
		}
	}

	var ids []string
	for _, ev := range srv.Events() {
		ids = append(ids, ev.ID)
	}
	if len(ids) < 12 {
		t.Fatalf("the fake sent %d events, want 4 for each of 3 payments", len(ids))
	}
	checkOnce(t, working, ids, waitBooked(t, working, ids))

	ans.mu.Lock()
	defer ans.mu.Unlock()
	if ans.codes[http.StatusOK] != len(ids) || len(ans.codes) != 1 {
		t.Errorf("answers %v, want one 200 per event (%d) and nothing else", ans.codes, len(ids))
	}
	for _, id := range ids {
		ended, ok := c.endedAt(id)
		if !ok {
			t.Errorf("event %s: its function never ended", id)
			continue
		}
		for _, at := range ans.at[id] {
			if !at.Before(ended) {
				t.Errorf("event %s answered at %v, after its function ended at %v", id, at, ended)
			}
		}
	}
	for _, d := range srv.Deliveries() {
		if d.Status != paymentstest.DeliveryDelivered || len(d.Attempts) != 1 {
			t.Errorf("delivery of %s: %s after %d attempts, want delivered at the first", d.EventID, d.Status, len(d.Attempts))
		}
	}
}

// A test event (Webhooks.Trigger, or payments trigger at a terminal) books
// no order: book acknowledges it and writes nothing, while a real
// payment's event in the same kind of transaction books its row.
func TestTriggeredEventBooksNoOrder(t *testing.T) {
	a := process(t, testDB(t), nil)
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})) // the events are booked below
	defer sink.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: sink.URL, Secrets: []string{secret}}))
	defer srv.Close()
	ctx := context.Background()
	if _, err := srv.Client().Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		t.Fatal(err)
	}
	pay(t, srv.Client(), "order-40", "2500.00")
	booked := map[bool]int{}
	for _, e := range srv.Events() {
		ev, err := payments.ParseEvent(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := a.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.book(ctx, tx, ev); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM order_events WHERE event_id = $1`, ev.ID).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		booked[webhook.Triggered(ev)] += rows
	}
	var testOrders int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE reference <> 'order-40'`).Scan(&testOrders); err != nil {
		t.Fatal(err)
	}
	if booked[true] != 0 || testOrders != 0 {
		t.Errorf("the test event booked %d event rows and %d orders, want none", booked[true], testOrders)
	}
	if booked[false] == 0 {
		t.Error("the payment's events booked nothing: the test cannot tell a skipped test event from a broken book")
	}
}
