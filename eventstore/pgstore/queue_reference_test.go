package pgstore_test

// Issue 45: payments referenced in any script are processed and tracked
// through the Queue, and an event the tracker cannot record completes its
// job with the merchant's writes instead of failing it (before: the job
// failed after the function had run, rolling it back, and River retried it
// for about three weeks).

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// Payments referenced in German, French, Yoruba (both spellings of its
// dots) and Chinese, and the longest reference the SDK accepts, delivered
// to a Queue's handler with events the tracker cannot record (a reference
// with a control character, one of 256 characters, no payment id, data
// that is not an object): every job completes on its first attempt, the
// merchant's function commits once per event, the referenced payments are
// tracked (Await by reference answers), and each untrackable event is a
// warning of the Queue's Logger, recording no outcome.
func TestQueueReferencesInAnyScript(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var mu sync.Mutex
	var logs strings.Builder
	calls := map[string]int{}
	fn := func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		mu.Lock()
		calls[ev.ID]++
		mu.Unlock()
		ref := ""
		if p, err := ev.Payment(); err == nil {
			ref = p.Reference
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, $2)", ev.ID, ref)
		return err
	}
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	// One attempt: a job that fails is discarded at once, not retried for
	// weeks, so that the test sees it.
	q := newQueue(t, pool, fn, &pgstore.QueueConfig{MaxAttempts: 1, Logger: logger})
	start(t, q.Queue)
	h := webhook.NewQueueHandler(outcometest.Verifier(t), q.Enqueue)

	ids := map[string]string{}
	var bodies [][]byte
	for _, ref := range outcometest.References {
		ids[ref] = outcometest.NewID("pay-")
		for _, typ := range []payments.EventType{payments.EventPaymentInitiated, payments.EventPaymentCompleted} {
			bodies = append(bodies, outcometest.Body(outcometest.NewID("ev-"), typ, ids[ref], ref))
		}
	}
	untrackable := []string{
		`{"id":"` + outcometest.NewID("ev-") + `","event":"payment.completed","data":{"id":"pay-ctl","reference":"order\u0007-1","status":"completed"}}`,
		`{"id":"` + outcometest.NewID("ev-") + `","event":"payment.failed","data":{"id":"pay-long","reference":"` + strings.Repeat("付", 256) + `","status":"failed"}}`,
		`{"id":"` + outcometest.NewID("ev-") + `","event":"payment.completed","data":{"reference":"order-2","status":"completed"}}`,
		`{"id":"` + outcometest.NewID("ev-") + `","event":"recipient.verified","data":"verified"}`,
	}
	for _, b := range untrackable {
		bodies = append(bodies, []byte(b))
	}
	for _, b := range bodies {
		if code := outcometest.Deliver(h, b); code != http.StatusOK {
			t.Fatalf("delivery answered %d, want 200", code)
		}
	}

	tracker := q.Tracker()
	ctx := testCtx(t)
	for _, ref := range outcometest.References {
		res, err := tracker.Await(ctx, ref)
		if err != nil || res.State != outcome.StateCompleted || res.ID != ids[ref] || res.Reference != ref {
			t.Fatalf("Await(%q) = %+v, %v; want payment %s completed", ref, res, err, ids[ref])
		}
	}
	eventually(t, time.Minute, "every job finished", func() bool {
		s := q.jobStates(t, pool)
		return s["completed"]+s["discarded"] == len(bodies)
	})
	if s := q.jobStates(t, pool); s["completed"] != len(bodies) {
		t.Fatalf("jobs by state %v, want %d completed and nothing else", s, len(bodies))
	}
	if n := rowsOf(t, pool, paid, ""); n != len(bodies) {
		t.Fatalf("%d rows in the merchant's table, want %d (one per event)", n, len(bodies))
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range calls {
		if n != 1 {
			t.Fatalf("the function ran %d times for %s, want once", n, id)
		}
	}
	if n := len(outcometest.Records(t, logs.String(), untrackableMsg)); n != len(untrackable) {
		t.Fatalf("%d warnings of untrackable events, want %d: %s", n, len(untrackable), logs.String())
	}
	for _, id := range []string{"pay-ctl", "pay-long"} {
		if _, err := tracker.Get(ctx, id); err == nil {
			t.Fatalf("an outcome was recorded for %s", id)
		}
	}
}
