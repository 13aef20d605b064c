package pgstore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// merchantTable creates a table like a merchant's own: deliberately with
// no unique key on the event, so that only the store keeps it free of
// duplicates.
func merchantTable(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	table := uniqueName("paid_")
	if _, err := pool.Exec(testCtx(tb), "CREATE TABLE "+table+" (id bigserial PRIMARY KEY, event_id text NOT NULL, reference text NOT NULL)"); err != nil {
		tb.Fatal(err)
	}
	dropOnCleanup(tb, pool, table)
	return table
}

// insertPaid is a merchant's processing: one row per event.
func insertPaid(table string) pgstore.TxEventFunc {
	return func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+table+" (event_id, reference) VALUES ($1, $2)", ev.ID, p.Reference)
		return err
	}
}

// rowsOf returns how many rows table has for id ("" for all of them).
func rowsOf(tb testing.TB, pool *pgxpool.Pool, table, id string) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(testCtx(tb), "SELECT count(*) FROM "+table+" WHERE $1 = '' OR event_id = $1", id).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// Three replicas, 500 events delivered 2 to 4 times; a tenth of the calls
// fail after their INSERT. The merchant's table ends with one row per
// event: the failed calls' rows rolled back with them.
func TestTransactionalExactlyOnce(t *testing.T) {
	t.Parallel()
	const events = 500
	f := backend.Stores(t, 3, 0)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	var calls, failed atomic.Int64
	logs := &storetest.Logs{}
	handlers := make([]http.Handler, len(f.Stores))
	for i, s := range f.Stores {
		insert := insertPaid(paid)
		fn := s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
			calls.Add(1)
			if err := insert(ctx, tx, ev); err != nil {
				return err
			}
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			if rand.IntN(10) == 0 {
				failed.Add(1)
				return errors.New("injected failure after the INSERT")
			}
			return nil
		})
		handlers[i] = webhook.NewHandler(storetest.Verifier(t), fn,
			webhook.WithStore(s), webhook.WithLogger(logs.Logger()))
	}
	ids := make([]string, events)
	for i := range ids {
		ids[i] = storetest.NewEventID(t)
	}
	storetest.DeliverAll(t, handlers, ids, 16)

	t.Logf("%d calls, %d failed after their INSERT", calls.Load(), failed.Load())
	if failed.Load() == 0 {
		t.Fatal("no call failed: the rollback was not exercised")
	}
	if n := rowsOf(t, admin, paid, ""); n != events {
		t.Errorf("the merchant's table has %d rows, want %d", n, events)
	}
	var distinct int
	if err := admin.QueryRow(testCtx(t), "SELECT count(DISTINCT event_id) FROM "+paid).Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	if distinct != events {
		t.Errorf("%d distinct events in the merchant's table, want %d", distinct, events)
	}
	// The handler's Complete after each commit found the event done with
	// its own token: no error logged.
	for _, msg := range []string{"event processed but not recorded", "could not release"} {
		if r := logs.Records(t, msg); len(r) > 0 {
			t.Errorf("%d log records %q, first: %v", len(r), msg, r[0])
		}
	}
}

// noLease hides a claim's lease from the handler, which then never cancels
// the function's context: a replica stalled while its transaction is open.
type noLease struct{ webhook.Store }

func (s noLease) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	c, err := s.Store.Claim(ctx, id)
	c.LeaseExpires = time.Time{}
	return c, err
}

// Replica A writes in its transaction, then stalls past its lease, cut off
// from the store (its renewals fail), or with its lease hidden from the
// handler (nothing renews or cancels it); replica B takes the event over and
// commits. A's transaction rolls back: one row.
func TestTransactionalStalledReplicaRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hideTime bool   // A's context is never cancelled
		wantErr  string // in A's log
	}{
		{"ContextCancelledByLease", false, "context deadline exceeded"},
		{"ClaimTakenOverWhileOpen", true, webhook.ErrClaimLost.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := backend.Stores(t, 2, time.Second)
			admin := sharedPool(t)
			paid := merchantTable(t, admin)
			partitioned := &storetest.DeadStore{Store: f.Stores[0]}
			var storeA webhook.Store = partitioned
			if tc.hideTime {
				storeA = noLease{f.Stores[0]}
			}
			inserted, resume := make(chan struct{}), make(chan struct{})
			defer close(resume)
			insert := insertPaid(paid)
			fnA := f.Stores[0].(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
				if err := insert(ctx, tx, ev); err != nil {
					return err
				}
				close(inserted)
				<-resume
				return nil // A believes it succeeded
			})
			logsA := &storetest.Logs{}
			hA := webhook.NewHandler(storetest.Verifier(t), fnA, webhook.WithStore(storeA), webhook.WithLogger(logsA.Logger()))
			hB := webhook.NewHandler(storetest.Verifier(t), f.Stores[1].(*pgstore.Store).Transactional(insert),
				webhook.WithStore(f.Stores[1]), webhook.WithClaimWait(0))

			body := storetest.EventBody(storetest.NewEventID(t))
			answerA := make(chan int, 1)
			go func() { answerA <- storetest.Deliver(hA, body) }()
			<-inserted
			partitioned.Kill() // A's renewals fail from now on
			var answers storetest.Answers
			if err := storetest.Retry(context.Background(), func() http.Handler { return hB }, body, &answers, 50*time.Millisecond, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if answers.Count(http.StatusConflict) == 0 {
				t.Errorf("B was not refused while A held the claim: %v", answers.String())
			}
			resume <- struct{}{}
			if code := <-answerA; code != http.StatusInternalServerError {
				t.Errorf("A answered %d, want 500 (its transaction rolled back)", code)
			}
			if n := rowsOf(t, admin, paid, ""); n != 1 {
				t.Errorf("the merchant's table has %d rows, want 1 (B's)", n)
			}
			failed := logsA.Records(t, "event processing failed")
			if len(failed) != 1 || !strings.Contains(failed[0]["error"].(string), tc.wantErr) {
				t.Errorf("A's log of its failure: %v, want %q", failed, tc.wantErr)
			}
			partitioned.Revive()
			if code := storetest.Deliver(hA, body); code != http.StatusOK {
				t.Errorf("a duplicate to A after B's commit: %d, want 200", code)
			}
			if n := rowsOf(t, admin, paid, ""); n != 1 {
				t.Errorf("the merchant's table has %d rows, want 1", n)
			}
		})
	}
}

// A panic after the INSERT rolls it back and returns the connection to the
// pool; the next delivery processes the event.
func TestTransactionalPanicRollsBack(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s, _ := newStore(t, pool)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	insert := insertPaid(paid)
	h := webhook.NewHandler(storetest.Verifier(t), s.Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		if calls.Add(1) == 1 {
			panic("merchant bug")
		}
		return nil
	}), webhook.WithStore(s))
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(h, body); code != http.StatusInternalServerError {
		t.Fatalf("panicking delivery: %d, want 500", code)
	}
	if n := rowsOf(t, pool, paid, ""); n != 0 {
		t.Fatalf("%d rows after the panic, want 0", n)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections still acquired after the panic", n)
	}
	for i := 0; i < 2; i++ {
		if code := storetest.Deliver(h, body); code != http.StatusOK {
			t.Fatalf("redelivery %d: %d, want 200", i, code)
		}
	}
	if n := rowsOf(t, pool, paid, ""); n != 1 || calls.Load() != 2 {
		t.Fatalf("%d rows after %d calls, want 1 after 2", n, calls.Load())
	}
}

func TestTransactionalNeedsTheHandlersClaim(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s, _ := newStore(t, pool)
	paid := merchantTable(t, pool)
	fn := s.Transactional(insertPaid(paid))
	ev, err := payments.ParseEvent(storetest.EventBody(storetest.NewEventID(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(context.Background(), ev); !errors.Is(err, pgstore.ErrNoClaim) {
		t.Errorf("called directly: %v, want ErrNoClaim", err)
	}
	// A handler that dedupes elsewhere (here its default memory store):
	// nothing is committed, and the error says why.
	logs := &storetest.Logs{}
	h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithLogger(logs.Logger()))
	if code := storetest.Deliver(h, ev.RawJSON()); code != http.StatusInternalServerError {
		t.Errorf("with another store: %d, want 500", code)
	}
	if n := rowsOf(t, pool, paid, ""); n != 0 {
		t.Errorf("%d rows committed with another store's claim", n)
	}
	if r := logs.Records(t, "event processing failed"); len(r) != 1 || !strings.Contains(r[0]["error"].(string), "does not use this store") {
		t.Errorf("log: %v", r)
	}
	defer func() {
		if recover() == nil {
			t.Error("Transactional(nil) did not panic")
		}
	}()
	s.Transactional(nil)
}

// The server goes down while three replicas process events in
// transactions: every event ends up with exactly one row and recorded as
// done, even those whose handler could not complete them.
func TestTransactionalOutage(t *testing.T) {
	t.Parallel()
	var admin *pgxpool.Pool
	var paid string
	b := storetest.Backend{Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
		srv := testservers.StartPostgres(tb)
		f := fixture(tb, srv.URL(), n, lease, 4)
		admin = newPool(tb, srv.URL(), 2)
		paid = merchantTable(tb, admin)
		return f, srv
	}}
	storetest.Outage(t, b, &storetest.Processor{
		Func: func(s webhook.Store) webhook.EventFunc {
			insert := insertPaid(paid)
			return s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
				time.Sleep(time.Millisecond)
				return insert(ctx, tx, ev)
			})
		},
		Effects: func(tb testing.TB, id string) int { return rowsOf(tb, admin, paid, id) },
	})
}

// A Transactional function that runs for four leases keeps its claim while
// it keeps using its transaction (a statement every eighth of the lease):
// the row lock is the lease, another replica's deliveries are refused after
// waiting for it (lock_timeout), and the work commits once, with no claim
// lost.
func TestTransactionalSlowFunctionKeepsItsClaim(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	f := backend.Stores(t, 2, lease)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls atomic.Int64
	started := make(chan struct{})
	slow := f.Stores[0].(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if calls.Add(1) == 1 {
			close(started)
		}
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		for end := time.Now().Add(4 * lease); time.Now().Before(end); {
			time.Sleep(lease / 8)
			if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
				return err
			}
		}
		return nil
	})
	logsA := &storetest.Logs{}
	hA := webhook.NewHandler(storetest.Verifier(t), slow, webhook.WithStore(f.Stores[0]), webhook.WithLogger(logsA.Logger()))
	hB := webhook.NewHandler(storetest.Verifier(t), f.Stores[1].(*pgstore.Store).Transactional(insert),
		webhook.WithStore(f.Stores[1]), webhook.WithClaimWait(0))
	body := storetest.EventBody(storetest.NewEventID(t))
	answerA := make(chan int, 1)
	go func() { answerA <- storetest.Deliver(hA, body) }()
	<-started
	for range 6 {
		time.Sleep(lease / 2)
		if code := storetest.Deliver(hB, body); code != http.StatusConflict && code != http.StatusOK {
			t.Errorf("B during A's slow transaction: %d, want 409 (or 200 once A committed)", code)
		}
	}
	if code := <-answerA; code != http.StatusOK {
		t.Fatalf("A answered %d, want 200:\n%s", code, logsA.String())
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 1 {
		t.Errorf("%d rows after %d calls, want 1 after 1", n, calls.Load())
	}
	for _, msg := range []string{"claim lost", "event processed but", "could not renew"} {
		if r := logsA.Records(t, msg); len(r) > 0 {
			t.Errorf("A logged %q: %v", msg, r[0])
		}
	}
}

// A Transactional function idle in its transaction (no statement in
// flight) for the lease minus its margin has its context cancelled, before
// the server ends the transaction at the lease and another delivery could
// take the event: a function that honours its context stops first, and no
// delivery runs it beside that one. One that keeps a statement in flight
// (a long query) is not stopped.
func TestTransactionalIdleFunctionIsStopped(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	f := backend.Stores(t, 2, lease)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls, running, overlaps atomic.Int64
	var cause atomic.Value
	slowQuery := make(chan error, 1)
	handler := func(s webhook.Store) http.Handler {
		fn := s.(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			if err := insert(ctx, tx, ev); err != nil {
				return err
			}
			switch calls.Add(1) {
			case 1: // idle, until stopped
				select {
				case <-ctx.Done():
					cause.Store(context.Cause(ctx).Error())
					return ctx.Err()
				case <-time.After(time.Minute):
					return errors.New("never stopped")
				}
			case 2: // a statement in flight for twice the lease
				_, err := tx.Exec(ctx, "SELECT pg_sleep($1)", (2 * lease).Seconds())
				slowQuery <- err
				return err
			}
			return nil
		})
		return webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(s), webhook.WithClaimWait(0))
	}
	a, b := handler(f.Stores[0]), handler(f.Stores[1])
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(a, body); code != http.StatusServiceUnavailable {
		t.Errorf("a function idle in its transaction: %d, want 503", code)
	}
	if c, _ := cause.Load().(string); !strings.Contains(c, "left its transaction idle") {
		t.Errorf("its context's cause: %q, want the idle transaction", c)
	}
	if code := storetest.Deliver(b, body); code != http.StatusOK {
		t.Errorf("the next delivery, whose function runs a long query: %d, want 200", code)
	}
	if err := <-slowQuery; err != nil {
		t.Errorf("the long query: %v, want it to finish", err)
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 2 || overlaps.Load() != 0 {
		t.Errorf("%d rows, %d calls, %d overlapping; want 1, 2, 0", n, calls.Load(), overlaps.Load())
	}
}

// A Transactional function that leaves its transaction idle for longer
// than the lease loses it (idle_in_transaction_session_timeout: the bound
// of a holder that went silent): nothing commits, the delivery gets 503,
// and the next one processes the event once.
func TestTransactionalIdleFunctionLosesItsLock(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	f := backend.Stores(t, 1, lease)
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls atomic.Int64
	fn := f.Stores[0].(*pgstore.Store).Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		if calls.Add(1) == 1 {
			time.Sleep(3 * lease) // silent in its transaction
		}
		return nil
	})
	h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(f.Stores[0]))
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(h, body); code != http.StatusServiceUnavailable {
		t.Errorf("a function idle past the lease: %d, want 503", code)
	}
	if n := rowsOf(t, admin, paid, ""); n != 0 {
		t.Errorf("%d rows committed by the idle function, want 0", n)
	}
	for i := 0; i < 2; i++ {
		if code := storetest.Deliver(h, body); code != http.StatusOK {
			t.Errorf("delivery %d after: %d, want 200", i+2, code)
		}
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 2 {
		t.Errorf("%d rows after %d calls, want 1 after 2", n, calls.Load())
	}
}
