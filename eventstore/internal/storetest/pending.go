package storetest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// PendingCompletions: replica A's functions succeed just as the server
// goes down, so that A cannot record them as done; the server stays down a
// while, then comes back on the same data. A answered 200 (the events were
// processed). The service's retries, sent to replica B once the server is
// back, must not run any function again: zero reruns, every event done.
func PendingCompletions(t *testing.T, b Backend) {
	const (
		events = 40
		// Longer than the outage, so that A's claims are still A's when
		// the server is back: whoever completes first is the question.
		lease = 10 * time.Second
	)
	f, srv := b.Outage(t, 2, lease)
	ledger := NewLedger()
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(events)
	fnA := func(_ context.Context, ev *payments.Event) error {
		ledger.Call(ev.ID)
		entered.Done()
		<-release
		ledger.Succeed(ev.ID)
		return nil
	}
	fnB := func(_ context.Context, ev *payments.Event) error {
		ledger.Call(ev.ID)
		ledger.Succeed(ev.ID)
		return nil
	}
	hA := webhook.NewHandler(Verifier(t), fnA, webhook.WithClaimStore(f.Stores[0]))
	hB := webhook.NewHandler(Verifier(t), fnB, webhook.WithClaimStore(f.Stores[1]))

	ids := make([]string, events)
	answersA := make(chan int, events)
	for i := range ids {
		ids[i] = NewEventID(t)
		go func(body []byte) { answersA <- Deliver(hA, body) }(EventBody(ids[i]))
	}
	entered.Wait()
	srv.Stop(t)
	close(release)
	for range ids {
		if code := <-answersA; code != http.StatusOK {
			t.Errorf("A answered %d for a processed event, want 200", code)
		}
	}
	time.Sleep(1500 * time.Millisecond) // the server stays down a while
	srv.Start(t)

	var (
		answers Answers
		wg      sync.WaitGroup
	)
	for _, id := range ids {
		wg.Add(1)
		go func(body []byte) {
			defer wg.Done()
			if err := Retry(context.Background(), func() http.Handler { return hB }, body, &answers, time.Second, 45*time.Second); err != nil {
				t.Error(err)
			}
		}(EventBody(id))
	}
	wg.Wait()
	t.Logf("B's answers once the server was back: %v", answers.String())
	reruns := 0
	for _, id := range ids {
		if n := ledger.Calls(id); n != 1 {
			reruns += n - 1
		}
	}
	if reruns != 0 {
		t.Errorf("%d of %d events processed by A ran again once the server was back, want 0", reruns, events)
	}
	for _, id := range ids {
		c, err := f.Stores[1].Claim(context.Background(), id)
		if err != nil || c.Status != webhook.ClaimDone {
			t.Errorf("event %s: %v, %v after the outage, want done", id, c.Status, err)
		}
	}
}
