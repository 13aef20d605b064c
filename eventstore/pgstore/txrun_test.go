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
	const lease = time.Second
	pool := newPool(t, testservers.SharedPostgres(t).URL(), 1)
	s, _ := newStore(t, pool, pgstore.WithLease(lease), pgstore.WithTimeout(100*time.Millisecond))
	var calls atomic.Int64
	fn := s.Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		for end := time.Now().Add(3 * lease); time.Now().Before(end); time.Sleep(lease / 10) {
			if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
				return err
			}
		}
		return nil
	})
	logs := &storetest.Logs{}
	h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(s), webhook.WithLogger(logs.Logger()))
	if code := storetest.Deliver(h, storetest.EventBody(storetest.NewEventID(t))); code != http.StatusOK || calls.Load() != 1 {
		t.Errorf("a function running three leases on a full pool: %d after %d calls, want 200 after 1\n%s", code, calls.Load(), logs.String())
	}
}

// A holder cut off from the database in the middle of its transaction (a
// partition: nothing reaches either side) keeps the row lock until the
// server ends its silent session, a lease later
// (idle_in_transaction_session_timeout); then another replica processes
// the event, and the cut-off one answers 503 once its watch finds the
// database silent. The event's work commits once.
func TestTransactionalPartitionedHolderLosesTheLock(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	srv := testservers.SharedPostgres(t)
	proxy := testservers.StartProxy(t, hostOf(t, srv.URL()))
	admin := sharedPool(t)
	table := uniqueName("events_")
	dropOnCleanup(t, admin, table)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	stores := make([]*pgstore.Store, 2)
	for i, url := range []string{proxy.URL(t, srv.URL()), srv.URL()} {
		s, err := pgstore.New(newPool(t, url, 4), pgstore.WithTable(table), pgstore.WithLease(lease))
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	if err := stores[1].Migrate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	inserted := make(chan struct{})
	fnA := stores[0].Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		close(inserted)
		<-ctx.Done() // cut off: it waits, as on a statement that never returns
		return context.Cause(ctx)
	})
	fnB := stores[1].Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		return insert(ctx, tx, ev)
	})
	logsA := &storetest.Logs{}
	hA := webhook.NewHandler(storetest.Verifier(t), fnA, webhook.WithStore(stores[0]), webhook.WithLogger(logsA.Logger()))
	hB := webhook.NewHandler(storetest.Verifier(t), fnB, webhook.WithStore(stores[1]), webhook.WithClaimWait(100*time.Millisecond))
	body := storetest.EventBody(storetest.NewEventID(t))
	answerA := make(chan int, 1)
	go func() { answerA <- storetest.Deliver(hA, body) }()
	<-inserted
	proxy.Freeze()
	defer proxy.Thaw()
	var answers storetest.Answers
	if err := storetest.Retry(context.Background(), func() http.Handler { return hB }, body, &answers, 100*time.Millisecond, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if answers.Count(http.StatusConflict) == 0 {
		t.Errorf("B was never refused while A held the lock: %s", answers.String())
	}
	if code := <-answerA; code != http.StatusServiceUnavailable {
		t.Errorf("A, cut off: %d, want 503\n%s", code, logsA.String())
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 2 {
		t.Errorf("%d rows after %d calls, want 1 (B's) after 2", n, calls.Load())
	}
}

// A delivery that finds a claim of the usual path (Reconcile's, made by
// Claim) waits for it to settle, as the handler's claim wait says: a
// duplicate once it completed, processed once when it was released.
func TestTransactionalWaitsForAUsualClaim(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s, _ := newStore(t, pool)
	paid := merchantTable(t, pool)
	insert := insertPaid(paid)
	var calls atomic.Int64
	h := webhook.NewHandler(storetest.Verifier(t), s.Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		calls.Add(1)
		return insert(ctx, tx, ev)
	}), webhook.WithStore(s), webhook.WithClaimWait(time.Minute))
	ctx := testCtx(t)
	for _, settle := range []string{"complete", "release"} {
		id := storetest.NewEventID(t)
		c, err := s.Claim(ctx, id)
		if err != nil || c.Status != webhook.ClaimAcquired {
			t.Fatalf("Claim = %v, %v", c.Status, err)
		}
		answer := make(chan int, 1)
		go func() { answer <- storetest.Deliver(h, storetest.EventBody(id)) }()
		time.Sleep(100 * time.Millisecond) // it waits (or has not asked yet: same answer)
		before := calls.Load()
		if settle == "complete" {
			err = s.Complete(ctx, c)
		} else {
			err = s.Release(ctx, c)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if settle == "release" {
			want = 1
		}
		if code := <-answer; code != http.StatusOK || calls.Load()-before != want {
			t.Errorf("after the usual claim's %s: %d after %d calls, want 200 after %d", settle, code, calls.Load()-before, want)
		}
	}
	if n := rowsOf(t, pool, paid, ""); n != 1 {
		t.Errorf("%d rows, want 1 (the released event's)", n)
	}
}
