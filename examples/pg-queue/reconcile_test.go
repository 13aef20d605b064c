package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// With the receiver down past every retry of the service, the worker's
// scheduled reconcile brings every event to book (the order rows, not only
// the tracker), each once; a run that lists them all again (the checkpoint
// lost) enqueues nothing and books nothing twice.
func TestReconcileBringsMissedEventsToBook(t *testing.T) {
	dbURL := testDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/webhooks"
	_ = ln.Close() // the receiver is down: every attempt is refused
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: down, Secrets: []string{secret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond}}))
	defer srv.Close()
	client := srv.Client()
	pay(t, client, "order-10", "2500.00")
	pay(t, client, "order-11", paymentstest.AmountFails)
	var ids []string
	for _, ev := range srv.Events() {
		ids = append(ids, ev.ID)
	}
	deadline := time.Now().Add(30 * time.Second)
	for failed := 0; failed < len(ids); {
		failed = 0
		for _, d := range srv.Deliveries() {
			if d.Status == paymentstest.DeliveryFailed {
				failed++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries failed for good", failed, len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}

	var c calls
	working := processOn(t, dbURL, c.fn(), true) // the merchant's own River client
	startWorker(t, working, client, 200*time.Millisecond)
	checkOnce(t, working, ids, waitBooked(t, working, ids))
	for ref, want := range map[string]string{"order-10": "completed", "order-11": "failed"} {
		var status string
		if err := working.pool.QueryRow(context.Background(), `SELECT status FROM orders WHERE reference = $1`, ref).Scan(&status); err != nil || status != want {
			t.Errorf("order %s: %q (%v), want %s", ref, status, err, want)
		}
	}
	var checkpoint string
	if err := working.pool.QueryRow(context.Background(), `SELECT event_id FROM reconcile_checkpoint`).Scan(&checkpoint); err != nil || checkpoint != ids[len(ids)-1] {
		t.Errorf("checkpoint %q (%v), want the last event %s", checkpoint, err, ids[len(ids)-1])
	}

	// Listed again from the window: duplicates cost nothing.
	if _, err := working.pool.Exec(context.Background(), `DELETE FROM reconcile_checkpoint`); err != nil {
		t.Fatal(err)
	}
	if err := working.reconcileOnce(context.Background(), client); err != nil {
		t.Fatal(err)
	}
	if jobs := len(eventJobs(t, working)); jobs != len(ids) {
		t.Errorf("%d event jobs after listing every event again, want %d", jobs, len(ids))
	}
	checkOnce(t, working, ids, waitBooked(t, working, ids))
}
