package pgstore_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// txHandler is a handler whose Transactional function is fn, on a fresh
// store of the shared server, remembering no event (each delivery asks the
// store).
func txHandler(t *testing.T, fn pgstore.TxEventFunc) http.Handler {
	t.Helper()
	s, _ := newStore(t, sharedPool(t))
	return webhook.NewHandler(storetest.Verifier(t), s.Transactional(fn), webhook.WithStore(s), webhook.WithRecentlyDone(0))
}

// The transaction a Transactional function gets behaves as pgx's: its
// statements, batches and COPY run in it, Begin makes a savepoint whose
// Rollback undoes only what was done since, and large objects work.
func TestTransactionalTxIsATransaction(t *testing.T) {
	t.Parallel()
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	var oid atomic.Uint32
	h := txHandler(t, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if _, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'outer')", ev.ID); err != nil {
			return err
		}
		inner, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := inner.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'undone')", ev.ID); err != nil {
			return err
		}
		if err := inner.Rollback(ctx); err != nil {
			return err
		}
		if _, err := inner.Exec(ctx, "SELECT 1"); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("a statement on a rolled back savepoint: %v, want pgx.ErrTxClosed", err)
		}
		kept, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		var b pgx.Batch
		b.Queue("INSERT INTO "+paid+" (event_id, reference) VALUES ($1, 'batch')", ev.ID)
		if err := kept.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if _, err := kept.CopyFrom(ctx, pgx.Identifier{paid}, []string{"event_id", "reference"},
			pgx.CopyFromRows([][]any{{ev.ID, "copy"}})); err != nil {
			return err
		}
		if err := kept.Commit(ctx); err != nil {
			return err
		}
		lo := tx.LargeObjects()
		id, err := lo.Create(ctx, 0)
		if err != nil {
			return err
		}
		oid.Store(id)
		return nil
	})
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(h, body); code != http.StatusOK {
		t.Fatalf("delivery: %d, want 200", code)
	}
	rows, err := admin.Query(testCtx(t), "SELECT reference FROM "+paid+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"outer", "batch", "copy"}; len(refs) != len(want) || refs[0] != want[0] || refs[1] != want[1] || refs[2] != want[2] {
		t.Errorf("committed rows %q, want %q", refs, want)
	}
	var n int
	if err := admin.QueryRow(testCtx(t), "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = $1", oid.Load()).Scan(&n); err != nil || n != 1 {
		t.Errorf("the large object made in the function: %d found (%v), want 1", n, err)
	}
}

// A function that commits or rolls back the store's transaction itself is
// refused: nothing commits before the store records the event done.
func TestTransactionalTxRefusesCommit(t *testing.T) {
	t.Parallel()
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls atomic.Int64
	h := txHandler(t, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		if calls.Add(1) == 1 {
			if err := tx.Rollback(ctx); err == nil {
				t.Error("Rollback of the store's transaction succeeded")
			}
			return tx.Commit(ctx)
		}
		return nil
	})
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(h, body); code != http.StatusInternalServerError {
		t.Errorf("a function whose Commit was refused: %d, want 500", code)
	}
	if n := rowsOf(t, admin, paid, ""); n != 0 {
		t.Errorf("%d rows committed by the refused Commit, want 0", n)
	}
	if code := storetest.Deliver(h, body); code != http.StatusOK {
		t.Errorf("the next delivery: %d, want 200", code)
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 2 {
		t.Errorf("%d rows after %d calls, want 1 after 2", n, calls.Load())
	}
}

// A function that swallows a failed statement and returns nil leaves a
// broken transaction, which COMMIT rolls back: the event is not recorded
// done (503), and the next delivery runs the function again.
func TestTransactionalBrokenTxIsNotDone(t *testing.T) {
	t.Parallel()
	admin := sharedPool(t)
	paid := merchantTable(t, admin)
	insert := insertPaid(paid)
	var calls atomic.Int64
	h := txHandler(t, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		if err := insert(ctx, tx, ev); err != nil {
			return err
		}
		if calls.Add(1) == 1 {
			_, _ = tx.Exec(ctx, "SELECT 1/0") // the error is dropped
		}
		return nil
	})
	body := storetest.EventBody(storetest.NewEventID(t))
	if code := storetest.Deliver(h, body); code != http.StatusServiceUnavailable {
		t.Errorf("a broken transaction: %d, want 503", code)
	}
	if code := storetest.Deliver(h, body); code != http.StatusOK {
		t.Errorf("the next delivery: %d, want 200", code)
	}
	if n := rowsOf(t, admin, paid, ""); n != 1 || calls.Load() != 2 {
		t.Errorf("%d rows after %d calls, want 1 after 2", n, calls.Load())
	}
}
