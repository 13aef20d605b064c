package main

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/riverqueue/river"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// failOnce is an outcome store that fails the first write of one payment.
type failOnce struct {
	*outcome.MemoryStore
	mu     sync.Mutex
	id     string
	failed bool
}

func (s *failOnce) Update(ctx context.Context, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	s.mu.Lock()
	fail := id == s.id && !s.failed
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return outcome.Outcome{}, errors.New("timeout: the database did not answer")
	}
	return s.MemoryStore.Update(ctx, id, fn)
}

// One event the tracker fails to record does not throw the listing away:
// the events of the page before and after it are recorded, the listing
// fails (River runs it again), and the next listing records the one that
// failed, from the cursor saved before it.
func TestListingKeepsWhatItRecorded(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "l.csv")
	rows := makeRows(t, srv, 3, path, "l", nil)
	ctx := context.Background()
	c := srv.Client()
	var ids []string
	for _, r := range rows {
		p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: r.Amount}, Currency: r.Currency,
			RecipientID: r.RecipientID, Reference: r.PayoutID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: r.PayoutID, QuoteID: p.Quote.QuoteID}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	a := testApp(t, db) // the tables
	store := &failOnce{MemoryStore: outcome.NewMemoryStore(), id: ids[0]}
	w := &listWorker{pool: a.pool, client: c, tracker: outcome.NewTracker(store)}
	known := func(ids ...string) (n int) {
		for _, id := range ids {
			if o, err := store.Load(ctx, id); err == nil && o.State.Final() {
				n++
			}
		}
		return n
	}
	if err := w.Work(ctx, &river.Job[listArgs]{}); err == nil || !store.failed {
		t.Fatalf("the first listing: %v (failed a write: %v)", err, store.failed)
	}
	if n := known(ids[1:]...); n != 2 {
		t.Errorf("after the failed write: %d of the other 2 outcomes recorded", n)
	}
	if err := w.Work(ctx, &river.Job[listArgs]{}); err != nil {
		t.Fatal(err)
	}
	if n := known(ids...); n != 3 {
		t.Errorf("after the next listing: %d outcomes recorded, want 3", n)
	}
}
