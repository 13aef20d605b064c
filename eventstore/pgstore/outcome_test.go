package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// statementCounter counts the statements a pool sends (those that name
// the table only, when set), by their first word.
type statementCounter struct {
	only            string
	selects, writes atomic.Int64
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if c.only != "" && !strings.Contains(d.SQL, c.only) {
		return ctx
	}
	if strings.HasPrefix(strings.TrimSpace(d.SQL), "SELECT") {
		c.selects.Add(1)
	} else {
		c.writes.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// outcomePool connects to url, counting statements when c is not nil.
func outcomePool(tb testing.TB, url string, c *statementCounter) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = 16
	if c != nil {
		cfg.ConnConfig.Tracer = c
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// outcomeStores opens two outcome stores, each on its own pool, over one
// fresh table of the server at url (its name is returned), and two event
// stores over another.
func outcomeStores(tb testing.TB, url string, opts ...pgstore.Option) ([2]*pgstore.OutcomeStore, [2]*pgstore.ClaimStore, string) {
	tb.Helper()
	table := uniqueName("outcomes_")
	events := uniqueName("events_")
	var ost [2]*pgstore.OutcomeStore
	var es [2]*pgstore.ClaimStore
	for i := range ost {
		pool := outcomePool(tb, url, nil)
		s, err := pgstore.NewOutcomeStore(pool, append([]pgstore.Option{pgstore.WithTable(table)}, opts...)...)
		if err != nil {
			tb.Fatal(err)
		}
		e, err := pgstore.NewClaimStore(pool, pgstore.WithTable(events))
		if err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			dropOnCleanup(tb, pool, table)
			dropOnCleanup(tb, pool, events)
			if err := s.Migrate(testCtx(tb)); err != nil {
				tb.Fatal(err)
			}
			if err := e.Migrate(testCtx(tb)); err != nil {
				tb.Fatal(err)
			}
		}
		ost[i], es[i] = s, e
	}
	return ost, es, table
}

// The rules of every outcome store. Each statement may take a minute, not
// DefaultTimeout's 2 s: ConcurrentUpdatesFromTwoReplicasAllLand sends 40
// updates of one row at once, which the row lock runs one after the other,
// and at a load average of 12 the last of them waited past 2 s (1 of 20
// runs): the rules do not depend on the deadline, which here would only
// measure the machine. A database that is down has its own test
// (TestOutcomeStoreDown, with a deadline of a second).
func TestOutcomeStoreConformance(t *testing.T) {
	t.Parallel()
	outcometest.Conformance(t, func(tb testing.TB) [2]outcome.Store {
		ost, _, _ := outcomeStores(tb, testservers.SharedPostgres(tb).URL(), pgstore.WithTimeout(time.Minute))
		return [2]outcome.Store{ost[0], ost[1]}
	})
}

// Two replicas, each with its own pool, sharing the event table and the
// outcome table: the tracker fed by Wrap.
func TestOutcomeStoreReplicas(t *testing.T) {
	t.Parallel()
	outcometest.Replicas(t, func(tb testing.TB, _ *slog.Logger) [2]outcometest.Replica {
		ost, es, _ := outcomeStores(tb, testservers.SharedPostgres(tb).URL())
		return [2]outcometest.Replica{{Events: es[0], Outcomes: ost[0]}, {Events: es[1], Outcomes: ost[1]}}
	})
}

// A duplicate costs one SELECT and no write; so does an event that
// repeats the state. In Transactional mode a duplicate delivery sends no
// outcome statement at all (the handler answers it from the claim).
func TestOutcomeStoreNoWriteForDuplicate(t *testing.T) {
	t.Parallel()
	url := testservers.SharedPostgres(t).URL()
	ost, _, table := outcomeStores(t, url)
	var c statementCounter
	s, err := pgstore.NewOutcomeStore(outcomePool(t, url, &c), pgstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	tr := outcome.NewTracker(s)
	ctx := testCtx(t)
	ev := outcometest.Event(t, "ev-1", payments.EventPaymentCompleted, "pay-1", "order-1")
	if _, eff, err := tr.Apply(ctx, ev); err != nil || eff != outcome.EffectForward {
		t.Fatal(eff, err)
	}
	if c.writes.Load() != 1 || c.selects.Load() != 1 {
		t.Fatalf("first event: %d selects, %d writes; want 1 and 1", c.selects.Load(), c.writes.Load())
	}
	again := outcometest.Event(t, "ev-2", payments.EventPaymentCompleted, "pay-1", "order-1")
	for _, e := range []*payments.Event{ev, ev, again} {
		if _, eff, err := tr.Apply(ctx, e); err != nil || eff != outcome.EffectNone {
			t.Fatal(eff, err)
		}
	}
	if c.writes.Load() != 1 || c.selects.Load() != 4 {
		t.Fatalf("after two duplicates and a repeat: %d selects, %d writes; want 4 and 1", c.selects.Load(), c.writes.Load())
	}
	o, err := ost[0].Load(ctx, "order-1")
	if err != nil || o.State != outcome.StateCompleted || len(o.Steps) != 1 {
		t.Fatalf("%+v %v", o, err)
	}

}

// The database is down: the delivery gets 503 (the claim store's claim
// fails first), nothing is marked, and the service's retry after the
// restart records the outcome once.
func TestOutcomeStoreDown(t *testing.T) {
	t.Parallel()
	srv := testservers.StartPostgres(t)
	ost, es, _ := outcomeStores(t, srv.URL(), pgstore.WithTimeout(time.Second))
	outcometest.StoreDown(t, outcometest.Replica{Events: es[0], Outcomes: ost[0]}, ost[1], func() { srv.Stop(t) }, func() { srv.Start(t) })
}

// Await returns in a second process (this test binary run again) when the
// webhook went to this one.
func TestOutcomeAwaitInAnotherProcess(t *testing.T) {
	t.Parallel()
	url := testservers.SharedPostgres(t).URL()
	verifier := outcometest.Verifier(t)
	markPaid := func(context.Context, pgx.Tx, *payments.Event) error { return nil }
	q := newQueue(t, sharedPool(t), markPaid, nil)
	start(t, q.Queue)
	// region outcomes-queue
	// The workers record each event's outcome in the transaction of its
	// job: the outcome and markPaid's writes commit together.
	h := webhook.NewQueueHandler(verifier, q.Enqueue)
	// endregion
	wait := outcometest.AwaitInChild(t, "TestOutcomeAwaitChild", "order-42",
		"PAYMENTS_OUTCOME_CHILD_PG_URL="+url, "PAYMENTS_OUTCOME_CHILD_PG_TABLE="+q.outcomes)
	if code := outcometest.Deliver(h, outcometest.Body("ev-42", payments.EventPaymentCompleted, "pay-42", "order-42")); code != http.StatusOK {
		t.Fatal(code)
	}
	if got := wait(); got != "completed ev-42" {
		t.Fatalf("the other process's Await said %q", got)
	}
}

// TestOutcomeAwaitChild is the second process of
// TestOutcomeAwaitInAnotherProcess; skipped in a normal run.
func TestOutcomeAwaitChild(t *testing.T) {
	outcometest.RunChild(t, func() *outcome.Tracker {
		pool := outcomePool(t, getenv(t, "PAYMENTS_OUTCOME_CHILD_PG_URL"), nil)
		s, err := pgstore.NewOutcomeStore(pool, pgstore.WithTable(getenv(t, "PAYMENTS_OUTCOME_CHILD_PG_TABLE")))
		if err != nil {
			t.Fatal(err)
		}
		return outcome.NewTracker(s, outcometest.PollInterval(50*time.Millisecond))
	})
}

func TestNewOutcomeStoreBadOptions(t *testing.T) {
	pool := outcomePool(t, "postgres://127.0.0.1:1/x", nil)
	for _, opts := range [][]pgstore.Option{
		{pgstore.WithTable("Bad-Name")}, {pgstore.WithTable("a.b.c")}, {pgstore.WithTimeout(0)},
		// A claim store's options have no meaning here: refused, not ignored.
		{pgstore.WithLease(time.Second)}, {pgstore.WithRetention(30 * 24 * time.Hour)}, {pgstore.WithPurgeEvery(0)},
	} {
		if _, err := pgstore.NewOutcomeStore(pool, opts...); !errors.Is(err, pgstore.ErrInvalidOption) {
			t.Fatalf("NewOutcomeStore: %v, want ErrInvalidOption", err)
		}
	}
	if _, err := pgstore.NewOutcomeStore(nil); !errors.Is(err, pgstore.ErrInvalidOption) {
		t.Fatalf("nil pool: %v", err)
	}
}

func getenv(t *testing.T, key string) string {
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("%s is not set", key)
	}
	return v
}

// An Await in another replica returns through LISTEN/NOTIFY, not a poll:
// every OutcomeStore notifies, with no option.
func TestOutcomeAwaitWokenByNotify(t *testing.T) {
	t.Parallel()
	ost, es, _ := outcomeStores(t, testservers.SharedPostgres(t).URL())
	outcometest.AwaitWoken(t, outcometest.Replica{Events: es[0], Outcomes: ost[0]}, ost[1])
}

// applyInTx runs, in one transaction of pool, a merchant's write for ev
// (a row in paid) and ApplyTx, then commits; it returns ApplyTx's results.
func applyInTx(t *testing.T, pool *pgxpool.Pool, s *pgstore.OutcomeStore, paid string, ev *payments.Event) (outcome.Outcome, outcome.Effect, error) {
	t.Helper()
	ctx := testCtx(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, '')", ev.ID); err != nil {
		t.Fatal(err)
	}
	o, eff, err := s.ApplyTx(ctx, tx, ev)
	if err != nil {
		return o, eff, err
	}
	// The transaction is as usable as before: the merchant's writes and
	// the completion commit.
	if _, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'after')", ev.ID); err != nil {
		t.Fatalf("event %s (%s): the transaction after ApplyTx: %v", ev.ID, eff, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("event %s (%s): commit: %v", ev.ID, eff, err)
	}
	return o, eff, nil
}

// outcomeRows counts the rows of an outcome table.
func outcomeRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(testCtx(t), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Payments referenced in German, French, Yoruba and Chinese (and the
// longest reference the SDK accepts, 765 bytes) are recorded by ApplyTx in
// the merchant's transaction, and found by reference from another pool.
func TestOutcomeStoreApplyTxReferences(t *testing.T) {
	t.Parallel()
	url := testservers.SharedPostgres(t).URL()
	ost, _, _ := outcomeStores(t, url)
	pool := outcomePool(t, url, nil)
	paid := merchantTable(t, pool)
	for _, ref := range outcometest.References {
		id := outcometest.NewID("pay-")
		for _, typ := range []payments.EventType{payments.EventPaymentInitiated, payments.EventPaymentCompleted} {
			if _, eff, err := applyInTx(t, pool, ost[0], paid, outcometest.Event(t, outcometest.NewID("ev-"), typ, id, ref)); err != nil || eff != outcome.EffectForward {
				t.Fatalf("%s of %q: %s, %v; want forward", typ, ref, eff, err)
			}
		}
		o, err := ost[1].Load(testCtx(t), ref)
		if err != nil || o.ID != id || o.Reference != ref || o.State != outcome.StateCompleted {
			t.Fatalf("Load(%q) = %+v, %v", ref, o, err)
		}
	}
}

// untrackable are events of tracked kinds that no tracker can record.
func untrackable(t *testing.T) []*payments.Event {
	t.Helper()
	var events []*payments.Event
	for _, body := range []string{
		`{"id":"ev-no-payment-id","event":"payment.completed","data":{"reference":"order-1","status":"completed"}}`,
		`{"id":"ev-control","event":"payment.completed","data":{"id":"pay-1","reference":"order\u0000-1","status":"completed"}}`,
		`{"id":"ev-too-long","event":"payment.failed","data":{"id":"pay-2","reference":"` + strings.Repeat("付", 256) + `","status":"failed"}}`,
		`{"id":"ev-not-an-object","event":"recipient.verified","data":"verified"}`,
	} {
		ev, err := payments.ParseEvent([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	// No event id: the handler never passes one on, a caller of ApplyTx may.
	return append(events, &payments.Event{Type: payments.EventPaymentCompleted, Data: []byte(`{"id":"pay-3","status":"completed"}`)})
}

// An event the tracker cannot record: ApplyTx returns EffectUntrackable
// and no error, logs a warning, writes no outcome, and leaves the
// merchant's transaction usable, so that its writes commit.
func TestOutcomeStoreApplyTxUntrackable(t *testing.T) {
	t.Parallel()
	url := testservers.SharedPostgres(t).URL()
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	ost, _, table := outcomeStores(t, url, pgstore.WithLogger(logger))
	pool := outcomePool(t, url, nil)
	paid := merchantTable(t, pool)
	events := untrackable(t)
	for _, ev := range events {
		if o, eff, err := applyInTx(t, pool, ost[0], paid, ev); err != nil || eff != outcome.EffectUntrackable || o.ID != "" {
			t.Fatalf("ApplyTx(%s) = %+v, %s, %v; want EffectUntrackable and no error", ev.ID, o, eff, err)
		}
	}
	if n := rowsOf(t, pool, paid, ""); n != 2*len(events) {
		t.Fatalf("%d rows of the merchant's committed, want %d (two per event)", n, 2*len(events))
	}
	if n := outcomeRows(t, pool, table); n != 0 {
		t.Fatalf("%d outcomes recorded, want none", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(outcometest.Records(t, logs.String(), untrackableMsg)); n != len(events) || strings.Contains(logs.String(), "付") {
		t.Fatalf("%d warnings, want %d, none quoting a reference: %s", n, len(events), logs.String())
	}
}

const untrackableMsg = "outcome: event cannot be tracked; the merchant's function runs and the event counts as processed"

// latin1Database creates a database whose encoding is LATIN1 on the
// shared server, dropped when the test ends, and returns its URL, with
// client_encoding UTF8.
func latin1Database(t *testing.T) string {
	t.Helper()
	admin := sharedPool(t)
	name := uniqueName("latin1_")
	if _, err := admin.Exec(testCtx(t), "CREATE DATABASE "+name+" ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := neturl.Parse(testservers.SharedPostgres(t).URL())
	if err != nil {
		t.Fatal("the server's URL does not parse")
	}
	u.Path = "/" + name
	// pgx expects UTF8 on the wire (its simple protocol refuses anything
	// else), and the server converts what it stores: the setting under
	// which the database refuses a character its encoding lacks. (Left
	// to the database's own encoding, the server would store the UTF-8
	// bytes as LATIN1 characters, unchecked.)
	q := u.Query()
	q.Set("client_encoding", "UTF8")
	u.RawQuery = q.Encode()
	return u.String()
}

// In a database whose encoding is not UTF8 (LATIN1), a reference the
// encoding can hold is recorded (German, French), and one it cannot
// (Yoruba's Ọ, Chinese) is untrackable: ApplyTx writes it in a savepoint,
// so that the refusal leaves the merchant's transaction usable and its
// writes commit; Tracker.Apply on the store reports it as untrackable too,
// and Confirmed refuses it with ErrInvalidEvent.
func TestOutcomeStoreApplyTxLatin1Database(t *testing.T) {
	t.Parallel()
	url := latin1Database(t)
	pool := outcomePool(t, url, nil)
	s, err := pgstore.NewOutcomeStore(pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	paid := merchantTable(t, pool)
	ctx := testCtx(t)
	for _, ref := range outcometest.References {
		want := outcome.EffectForward
		if strings.ContainsFunc(ref, func(r rune) bool { return r > 0xff }) {
			want = outcome.EffectUntrackable
		}
		id := outcometest.NewID("pay-")
		if _, eff, err := applyInTx(t, pool, s, paid, outcometest.Event(t, outcometest.NewID("ev-"), payments.EventPaymentCompleted, id, ref)); err != nil || eff != want {
			t.Fatalf("ApplyTx of %q: %s, %v; want %s", ref, eff, err, want)
		}
		tr := outcome.NewTracker(s)
		if _, eff, err := tr.Apply(ctx, outcometest.Event(t, outcometest.NewID("ev-"), payments.EventPaymentCompleted, outcometest.NewID("pay-"), ref)); err != nil || eff != want {
			t.Fatalf("Tracker.Apply of %q: %s, %v; want %s", ref, eff, err, want)
		}
		err := tr.Confirmed(ctx, &payments.Payment{ID: outcometest.NewID("pay-"), Reference: ref})
		if (want == outcome.EffectUntrackable) != errors.Is(err, outcome.ErrInvalidEvent) || (want == outcome.EffectForward && err != nil) {
			t.Fatalf("Confirmed of %q: %v", ref, err)
		}
		if o, err := s.Load(ctx, id); (want == outcome.EffectForward) != (err == nil && o.Reference == ref) {
			t.Fatalf("Load(%s), referenced %q = %+v, %v", id, ref, o, err)
		}
	}
	if n := rowsOf(t, pool, paid, ""); n != 2*len(outcometest.References) {
		t.Fatalf("%d rows of the merchant's committed, want %d", n, 2*len(outcometest.References))
	}
}

// ApplyTx, in the Queue's transaction, writes first: an event whose
// payment has no outcome yet costs one INSERT and no read; a later event
// of the payment (its INSERT finds the row and writes nothing) reads and
// updates, and a duplicate writes nothing; the outcome is the one Update
// would have made.
func TestOutcomeStoreApplyTxInsertsFirst(t *testing.T) {
	t.Parallel()
	url := testservers.SharedPostgres(t).URL()
	ost, _, table := outcomeStores(t, url)
	c := statementCounter{only: table}
	pool := outcomePool(t, url, &c)
	s, err := pgstore.NewOutcomeStore(pool, pgstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	paid := merchantTable(t, pool)
	counts := func() [2]int64 { return [2]int64{c.selects.Load(), c.writes.Load()} }
	first := outcometest.Event(t, "ev-1", payments.EventPaymentInitiated, "pay-1", "order-1")
	if _, eff, err := applyInTx(t, pool, s, paid, first); err != nil || eff != outcome.EffectForward {
		t.Fatal(eff, err)
	}
	if got := counts(); got != [2]int64{0, 1} {
		t.Fatalf("the payment's first event: %d selects, %d writes; want 0 and 1", got[0], got[1])
	}
	second := outcometest.Event(t, "ev-2", payments.EventPaymentCompleted, "pay-1", "order-1")
	if _, eff, err := applyInTx(t, pool, s, paid, second); err != nil || eff != outcome.EffectForward {
		t.Fatal(eff, err)
	}
	if got := counts(); got != [2]int64{1, 3} {
		t.Fatalf("after its second event: %d selects, %d writes; want 1 and 3 (an INSERT that found the row, then the read and the UPDATE)", got[0], got[1])
	}
	if _, eff, err := applyInTx(t, pool, s, paid, second); err != nil || eff != outcome.EffectNone {
		t.Fatal(eff, err)
	}
	o, err := ost[0].Load(testCtx(t), "order-1")
	if err != nil || o.State != outcome.StateCompleted || len(o.Steps) != 2 {
		t.Fatalf("%+v %v; want completed after two steps", o, err)
	}
	var version int64
	if err := pool.QueryRow(testCtx(t), "SELECT version FROM "+table+" WHERE id = 'pay-1'").Scan(&version); err != nil || version != 2 {
		t.Fatalf("the row's version: %d (%v), want 2: one INSERT and one UPDATE, the duplicate wrote nothing", version, err)
	}
}
