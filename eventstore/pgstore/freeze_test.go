package pgstore_test

import (
	"context"
	"net/http"
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

// frozenBound is how long a delivery may take to be answered while the
// database is frozen: pgstore.DefaultTimeout (the handler's store timeout
// is the same) for the one statement that hangs, then the rollback's, with
// room for a loaded machine. Answers come from timers, not from work.
const frozenBound = 3*pgstore.DefaultTimeout + time.Second

// A frozen PostgreSQL (SIGSTOP: connections stay open, nothing answers):
// deliveries get 503 within frozenBound, in the default mode and with
// Transactional, whether they arrive while it is frozen or it freezes
// after their claim; none is processed, and once it is thawed each event
// is processed once.
func TestFrozenDatabase(t *testing.T) {
	t.Parallel()
	srv := testservers.StartPostgres(t)
	pool := newPool(t, srv.URL(), 8)
	s, _ := newStore(t, pool)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	insert := insertPaid(paid)
	modes := map[string]webhook.EventFunc{
		"default": func(context.Context, *payments.Event) error { calls.Add(1); return nil },
		"Transactional": s.Transactional(func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
			calls.Add(1)
			return insert(ctx, tx, ev)
		}),
	}
	var freezeAfterClaim atomic.Bool
	for name, fn := range modes {
		freezing := &freezeOnClaim{Store: s, freeze: func() {
			if freezeAfterClaim.CompareAndSwap(true, false) {
				srv.Freeze(t)
			}
		}}
		h := webhook.NewHandler(storetest.Verifier(t), fn, webhook.WithStore(freezing))
		warm := storetest.EventBody(storetest.NewEventID(t))
		if code := storetest.Deliver(h, warm); code != http.StatusOK {
			t.Fatalf("%s: a delivery before the freeze: %d", name, code)
		}
		before := calls.Load()

		arriving := storetest.EventBody(storetest.NewEventID(t))
		srv.Freeze(t)
		code, took, returned := storetest.DeliverWithin(h, arriving, frozenBound+10*time.Second)
		srv.Thaw(t)
		if !returned || code != http.StatusServiceUnavailable || took > frozenBound {
			t.Errorf("%s: a delivery while frozen: %d after %v (returned: %v); want 503 within %v", name, code, took.Round(time.Millisecond), returned, frozenBound)
		}

		// Claimed, then the server freezes before the function's
		// transaction begins (Transactional) or its completion (default).
		claimed := storetest.EventBody(storetest.NewEventID(t))
		freezeAfterClaim.Store(true)
		code, took, returned = storetest.DeliverWithin(h, claimed, frozenBound+10*time.Second)
		srv.Thaw(t)
		t.Logf("%s: frozen after its claim: %d after %v", name, code, took.Round(time.Millisecond))
		want := http.StatusServiceUnavailable
		if name == "default" {
			want = http.StatusOK // processed; the completion is retried in the background
		}
		if !returned || took > frozenBound || (code != want && code != http.StatusInternalServerError) {
			t.Errorf("%s: a delivery frozen after its claim: %d after %v (returned: %v); want %d within %v", name, code, took.Round(time.Millisecond), returned, want, frozenBound)
		}
		for _, body := range [][]byte{arriving, claimed} {
			var answers storetest.Answers
			if err := storetest.Retry(context.Background(), func() http.Handler { return h }, body, &answers, 100*time.Millisecond, 30*time.Second); err != nil {
				t.Fatalf("%s: after the thaw: %v", name, err)
			}
		}
		if n := calls.Load() - before; name == "Transactional" && n > 2 || n < 2 {
			t.Errorf("%s: %d calls for the two events, want 2", name, n)
		}
	}
	if n := rowsOf(t, pool, paid, ""); n != 3 {
		t.Errorf("%d rows in the merchant's table, want 3 (one per event of Transactional)", n)
	}
}

// freezeOnClaim calls freeze after every successful Claim.
type freezeOnClaim struct {
	webhook.Store
	freeze func()
}

func (s *freezeOnClaim) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	c, err := s.Store.Claim(ctx, id)
	if err == nil {
		s.freeze()
	}
	return c, err
}
