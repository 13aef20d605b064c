package pgstore_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// With Transactional, concurrent deliveries of one event never run the
// function beside the first: while the first's transaction is open, the
// others wait for its row lock, then answer 409 when their claim wait
// (lock_timeout) ends first, or 200 as duplicates once it committed,
// without a call.
func TestTransactionalConcurrentDuplicateWaitsForTheLock(t *testing.T) {
	t.Parallel()
	f := backend.Stores(t, 3, 0)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls, running, overlaps atomic.Int64
	entered, release := make(chan struct{}, 1), make(chan struct{})
	handler := func(s webhook.Store, wait time.Duration) http.Handler {
		fn := s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			calls.Add(1)
			if err := insert(ctx, tx, ev); err != nil {
				return err
			}
			entered <- struct{}{}
			<-release
			return nil
		})
		return webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(s), webhook.WithClaimWait(wait))
	}
	first := handler(f.Stores[0], 0)
	body := storetest.EventBody(storetest.NewEventID(t))
	answer := make(chan int, 1)
	go func() { answer <- storetest.Deliver(first, body) }()
	<-entered

	// Short waits: 409 while the first holds the lock.
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- storetest.Deliver(handler(f.Stores[i%3], 100*time.Millisecond), body)
		}()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusConflict {
			t.Errorf("a concurrent delivery while the first ran: %d, want 409", code)
		}
	}
	// A long wait: answered as a duplicate once the first commits.
	waiting := make(chan int, 1)
	go func() { waiting <- storetest.Deliver(handler(f.Stores[1], time.Minute), body) }()
	time.Sleep(200 * time.Millisecond) // it waits on the lock (or has not started: same answer)
	close(release)
	if code := <-answer; code != http.StatusOK {
		t.Errorf("the first delivery: %d, want 200", code)
	}
	if code := <-waiting; code != http.StatusOK {
		t.Errorf("the delivery that waited: %d, want 200", code)
	}
	if calls.Load() != 1 || overlaps.Load() != 0 || rowsOf(t, admin, paid, "") != 1 {
		t.Errorf("%d calls, %d overlapping, %d rows; want 1, 0, 1", calls.Load(), overlaps.Load(), rowsOf(t, admin, paid, ""))
	}
}

// Sixteen senders deliver each of 100 events 4 times at once to three
// replicas: the function never runs twice at once for an event, and each
// event commits once.
func TestTransactionalConcurrentDuplicatesNeverOverlap(t *testing.T) {
	t.Parallel()
	const events = 100
	f := backend.Stores(t, 3, 0)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var mu sync.Mutex
	running := map[string]int{}
	var overlaps atomic.Int64
	handlers := make([]http.Handler, len(f.Stores))
	for i, s := range f.Stores {
		fn := s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
			mu.Lock()
			running[ev.ID]++
			if running[ev.ID] > 1 {
				overlaps.Add(1)
			}
			mu.Unlock()
			defer func() { mu.Lock(); running[ev.ID]--; mu.Unlock() }()
			time.Sleep(2 * time.Millisecond)
			return insert(ctx, tx, ev)
		})
		handlers[i] = webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(s))
	}
	ids := make([]string, events)
	for i := range ids {
		ids[i] = storetest.NewEventID(t)
	}
	var wg sync.WaitGroup
	for i := range ids {
		for k := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var answers storetest.Answers
				h := handlers[(i+k)%len(handlers)]
				if err := storetest.Retry(context.Background(), func() http.Handler { return h }, storetest.EventBody(ids[i]), &answers, 20*time.Millisecond, time.Minute); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Errorf("the function ran beside itself %d times", overlaps.Load())
	}
	var distinct, rows int
	if err := admin.QueryRow(testCtx(t), "SELECT count(DISTINCT event_id), count(*) FROM "+paid).Scan(&distinct, &rows); err != nil {
		t.Fatal(err)
	}
	if distinct != events || rows != events {
		t.Errorf("%d rows for %d events, want %d for %d", rows, distinct, events, events)
	}
}

// The watch's pings wait for a connection of the pool when every one is
// taken (here the pool's only one, by the function's own transaction): a
// wait for the pool is no evidence that the database stopped answering,
// and the function, which keeps using its transaction, is not cancelled.
func TestTransactionalWatchIgnoresAFullPool(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	pool := newPool(t, testservers.SharedPostgres(t).URL(), 1)
	s, _ := newStore(t, pool, pgstore.WithLease(lease), pgstore.WithTimeout(100*time.Millisecond))
	var calls atomic.Int64
	fn := s.Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		for end := time.Now().Add(5 * lease); time.Now().Before(end); time.Sleep(lease / 6) {
			if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
				return err
			}
		}
		return nil
	})
	logs := &storetest.Logs{}
	h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(s), webhook.WithLogger(logs.Logger()))
	if code := storetest.Deliver(h, storetest.EventBody(storetest.NewEventID(t))); code != http.StatusOK || calls.Load() != 1 {
		t.Errorf("a function running five leases on a full pool: %d after %d calls, want 200 after 1\n%s", code, calls.Load(), logs.String())
	}
}
