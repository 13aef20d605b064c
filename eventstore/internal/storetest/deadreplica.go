package storetest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// DeadReplica: replica A claims an event, then loses the database (a
// partition: its renewals fail) while its function stalls, ignoring its
// context. The handler cancels A's context when the lease runs out;
// redeliveries to replica B are refused (409) while A's lease lasts, then
// processed once by B. When A's partition heals and its function finally
// returns success, A answers 200 and its Complete gets ErrClaimLost
// (logged); B's completion stands: later deliveries are duplicates for both
// replicas, and A has nothing left pending.
func DeadReplica(t *testing.T, b Backend) {
	const lease = time.Second
	f := b.Stores(t, 2, lease)
	storeA := &DeadStore{ClaimStore: f.Stores[0]}
	logsA := &Logs{}
	started, resume := make(chan struct{}), make(chan struct{})
	var startOnce, resumeOnce sync.Once
	letAGo := func() { resumeOnce.Do(func() { close(resume) }) }
	defer letAGo() // even when the test fails early
	cancelled := make(chan error, 1)
	var claimA webhook.Claim
	fnA := func(ctx context.Context, ev *payments.Event) error {
		claimA, _ = webhook.ClaimFromContext(ctx)
		startOnce.Do(func() { close(started) })
		<-ctx.Done() // the handler gave up on the claim
		cancelled <- context.Cause(ctx)
		<-resume // stalled past its lease
		return nil
	}
	var callsB atomic.Int64
	var calledB atomic.Int64 // unix nanoseconds of B's call
	fnB := func(context.Context, *payments.Event) error {
		callsB.Add(1)
		calledB.Store(time.Now().UnixNano())
		return nil
	}
	hA := webhook.NewHandler(Verifier(t), fnA, webhook.WithClaimStore(storeA), webhook.WithLogger(logsA.Logger()))
	hB := webhook.NewHandler(Verifier(t), fnB, webhook.WithClaimStore(f.Stores[1]), webhook.WithClaimWait(0))

	id := NewEventID(t)
	body := EventBody(id)
	answerA := make(chan int, 1)
	go func() { answerA <- Deliver(hA, body) }()
	<-started
	storeA.Kill()
	if code := Deliver(hB, body); code != http.StatusConflict {
		t.Fatalf("delivery to B while A holds the claim: %d, want 409", code)
	}
	// B's retries: refused until the lease lapses, then processed once.
	var answers Answers
	if err := Retry(context.Background(), func() http.Handler { return hB }, body, &answers, 50*time.Millisecond, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if answers.Count(http.StatusConflict) == 0 || answers.Count(http.StatusOK) != 1 {
		t.Errorf("B's retries were answered %v, want 409s until the lease ran out, then 200", answers.String())
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("A's context ended with %v, want the lease's end", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("A's context was not cancelled when its lease ran out")
	}
	if time.Unix(0, calledB.Load()).Before(claimA.LeaseExpires) {
		t.Errorf("B processed the event before A's lease ran out")
	}
	if n := callsB.Load(); n != 1 {
		t.Fatalf("B ran the function %d times, want 1", n)
	}

	storeA.Revive()
	letAGo()
	if code := <-answerA; code != http.StatusOK {
		t.Errorf("A's answer after its late success: %d, want 200 (the event was processed)", code)
	}
	recs := logsA.Records(t, "event processed but its claim was lost")
	if len(recs) != 1 || !strings.Contains(recs[0]["error"].(string), webhook.ErrClaimLost.Error()) {
		t.Errorf("A's log of its lost claim: %v, want one record with ErrClaimLost", recs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hA.Shutdown(ctx); err != nil {
		t.Errorf("A's Shutdown: %v, want nothing left pending", err)
	}
	// B's completion stands for both replicas.
	hA2 := webhook.NewHandler(Verifier(t), fnA, webhook.WithClaimStore(storeA))
	for _, h := range []http.Handler{hA2, hB} {
		if code := Deliver(h, body); code != http.StatusOK {
			t.Errorf("duplicate after B's completion: %d, want 200", code)
		}
	}
	if n := callsB.Load(); n != 1 {
		t.Errorf("B ran the function %d times, want 1", n)
	}
	for _, s := range f.Stores {
		if c, err := s.Claim(context.Background(), id); err != nil || c.Status != webhook.ClaimDone {
			t.Errorf("Claim after B's completion = %v, %v; want done", c.Status, err)
		}
	}
	if r := f.TTL(id); r < 24*time.Hour {
		t.Errorf("the completion is kept %v: A's late Complete disturbed it", r)
	}
}
