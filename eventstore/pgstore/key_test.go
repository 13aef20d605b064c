package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/webhook"
)

// Ids PostgreSQL cannot store as text keys: a NUL byte, invalid UTF-8, and
// more than a btree entry holds (about 2.7 kB). Each used to fail every
// statement, for ever.
func oddIDs() map[string]string {
	return map[string]string{
		"NUL":          "evt-nul-\x00-1",
		"invalid UTF8": "evt-\xff\xfe-1",
		"9 kB":         noise(9000),
		"100 kB":       noise(100_000),
		// Plain ids that look like the keys of hashed ones.
		"prefix":  "sha256:0123",
		"256 B":   strings.Repeat("b", 256),
		"257 B":   strings.Repeat("b", 257),
		"unicode": "évènement-" + strings.Repeat("é", 120),
	}
}

// noise is n bytes of random hex: PostgreSQL cannot compress it below the
// btree's limit, as it does a repeated letter.
func noise(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// Every id can be claimed, completed, found done, renewed and released,
// and ids that differ get different keys, also the ones that are hashed.
func TestOddEventIDsAreStorable(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s, _ := newStore(t, pool)
	ctx := testCtx(t)
	for name, id := range oddIDs() {
		c, err := s.Claim(ctx, id)
		if err != nil || c.Status != webhook.ClaimAcquired {
			t.Fatalf("%s: Claim = %v, %v", name, c.Status, err)
		}
		if again, err := s.Claim(ctx, id); err != nil || again.Status != webhook.ClaimInProgress {
			t.Fatalf("%s: second Claim = %v, %v; want in progress", name, again.Status, err)
		}
		if _, err := s.Renew(ctx, c); err != nil {
			t.Fatalf("%s: Renew: %v", name, err)
		}
		if err := s.Release(ctx, c); err != nil {
			t.Fatalf("%s: Release: %v", name, err)
		}
		c, err = s.Claim(ctx, id)
		if err != nil || c.Status != webhook.ClaimAcquired {
			t.Fatalf("%s: Claim after Release = %v, %v", name, c.Status, err)
		}
		if err := s.Complete(ctx, c); err != nil {
			t.Fatalf("%s: Complete: %v", name, err)
		}
		if c, err := s.Claim(ctx, id); err != nil || c.Status != webhook.ClaimDone {
			t.Fatalf("%s: Claim after Complete = %v, %v; want done", name, c.Status, err)
		}
	}
	// Near misses are other events.
	for _, id := range []string{"evt-nul-\x00-2", noise(9000), noise(100_000), "sha256:0124"} {
		if c, err := s.Claim(ctx, id); err != nil || c.Status != webhook.ClaimAcquired {
			t.Errorf("Claim(%.20q) = %v, %v; want acquired (another event)", id, c.Status, err)
		}
	}
}

// The same ids in signed deliveries, in the default mode and through the
// Queue's handler (webhook.NewQueueHandler): processed once (200), and a
// redelivery is a duplicate (200) without a second call in the default
// mode, and without a second row or job in the Queue (every delivery
// reaches Enqueue there).
func TestOddEventIDsThroughTheHandler(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s, _ := newStore(t, pool)
	paid := merchantTable(t, pool)
	var calls atomic.Int64
	plain := func(context.Context, *payments.Event) error { calls.Add(1); return nil }
	q := newQueue(t, pool, func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		// The merchant's own table cannot hold these ids either.
		_, err := tx.Exec(ctx, "INSERT INTO "+paid+" (event_id, reference) VALUES (md5($1::bytea), 'ref')", []byte(ev.ID))
		return err
	}, nil)
	// JSON carries the NUL escaped; the parser decodes it into the id.
	bodies := map[string][]byte{
		"NUL":    storetest.EventBody(`evt-nul-\u0000-` + storetest.NewEventID(t)),
		"9 kB":   storetest.EventBody(noise(9000)),
		"100 kB": storetest.EventBody(noise(100_000)),
	}
	modes := map[string]struct {
		h     http.Handler
		count func() int64 // calls of the function, or events the Queue holds
	}{
		"default": {webhook.NewHandler(storetest.Verifier(t), plain, webhook.WithClaimStore(s), storetest.NoRecentlyDone()), calls.Load}, // the redelivery asks the store
		"Queue":   {webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue), func() int64 { return int64(q.enqueued(t)) }},
	}
	for mode, m := range modes {
		for name, body := range bodies {
			body := []byte(strings.Replace(string(body), `"id":"`, `"id":"`+mode, 1))
			before := m.count()
			if code := storetest.Deliver(m.h, body); code != http.StatusOK {
				t.Errorf("%s, %s id: %d, want 200", mode, name, code)
			}
			if code := storetest.Deliver(m.h, body); code != http.StatusOK {
				t.Errorf("%s, %s id, redelivered: %d, want 200", mode, name, code)
			}
			if n := m.count() - before; n != 1 {
				t.Errorf("%s, %s id: %d calls or events enqueued, want 1", mode, name, n)
			}
		}
	}
	if n := len(q.jobs(t)); n != len(bodies) {
		t.Errorf("River lists %d jobs for %d events delivered twice each, want %d", n, len(bodies), len(bodies))
	}
	start(t, q.Queue)
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == len(bodies) })
	if n := rowsOf(t, pool, paid, ""); n != len(bodies) {
		t.Errorf("%d rows in the merchant's table, want %d", n, len(bodies))
	}
}
