package storetest

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// Processor is what the replicas do with each event, and how a test counts
// its effects.
type Processor struct {
	// Func returns the EventFunc of the replica on store.
	Func func(store webhook.ClaimStore) webhook.EventFunc
	// Effects returns how many times the effects of event id happened.
	Effects func(t testing.TB, id string) int
}

// LedgerProcessor processes events by counting them in a ledger.
func LedgerProcessor() *Processor {
	l := NewLedger()
	return &Processor{
		Func: func(webhook.ClaimStore) webhook.EventFunc {
			return func(_ context.Context, ev *payments.Event) error {
				l.Call(ev.ID)
				time.Sleep(time.Millisecond)
				l.Succeed(ev.ID)
				return nil
			}
		},
		Effects: func(_ testing.TB, id string) int { return l.Successes(id) },
	}
}

// Outage stops the server while events are being delivered to three
// replicas that process them with p, then starts it again on the same port
// and data. While it is down, the handlers answer 503 and log why, and no
// function runs; once it is back, the refused events are delivered again
// and processed: each event's effects happen exactly once, nothing is lost.
// The server's password never reaches a log.
func Outage(t *testing.T, b Backend, p *Processor) {
	const (
		events  = 150
		senders = 8
		// Longer than the outage: the claims of the functions that
		// succeeded just as the server went away are still theirs when it
		// is back, and their handlers record them (see PendingCompletions).
		lease = 10 * time.Second
	)
	f, srv := b.Outage(t, 3, lease)
	logs := &Logs{}
	var calls atomic.Int64
	handlers := make([]http.Handler, len(f.Stores))
	for i, s := range f.Stores {
		fn := p.Func(s)
		counted := func(ctx context.Context, ev *payments.Event) error {
			calls.Add(1)
			return fn(ctx, ev)
		}
		handlers[i] = webhook.NewHandler(Verifier(t), counted,
			webhook.WithClaimStore(s), webhook.WithLogger(logs.Logger()))
	}
	var rr atomic.Uint64
	next := func() http.Handler { return handlers[rr.Add(1)%uint64(len(handlers))] }

	ids := make([]string, events)
	for i := range ids {
		ids[i] = NewEventID(t)
	}
	var (
		answers Answers
		nextIdx atomic.Int64
		wg      sync.WaitGroup
	)
	// The second half of the events is sent once the server is down: on
	// a fast machine (or a slow stop) the senders could otherwise finish
	// every event before it goes, and no 503 would ever come.
	down := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	// Senders stop before the test ends, even when it fails early.
	defer wg.Wait()
	defer cancel()
	for w := 0; w < senders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(nextIdx.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				if i >= len(ids)/2 {
					select {
					case <-down:
					case <-ctx.Done():
						return
					}
				}
				err := Retry(ctx, next, EventBody(ids[i]), &answers, 200*time.Millisecond, 2*time.Minute)
				if err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}
		}()
	}

	waitFor(t, "a third of the events processed", 30*time.Second, func() bool { return calls.Load() >= events/3 })
	srv.Stop(t)
	close(down)
	waitFor(t, "503 answers while the server is down", 30*time.Second, func() bool { return answers.Count(http.StatusServiceUnavailable) >= 10 })
	// Functions already running when the server stopped may finish; no
	// new one starts while it is down.
	time.Sleep(200 * time.Millisecond)
	during := calls.Load()
	time.Sleep(time.Second)
	if after := calls.Load(); after != during {
		t.Errorf("%d functions called while the server was down", after-during)
	}
	if during >= events {
		t.Fatal("every event was processed before the outage: nothing was redelivered")
	}
	srv.Start(t)
	wg.Wait()
	t.Logf("%d events, %d function calls before the outage; answers: %v", events, during, answers.String())

	for _, id := range ids {
		if n := p.Effects(t, id); n != 1 {
			t.Errorf("event %s: effects happened %d times, want once", id, n)
		}
	}
	refused := logs.Records(t, "webhook refused: claim store unavailable")
	if len(refused) == 0 {
		t.Error("no log of the refusals")
	} else if e, _ := refused[0]["error"].(string); e == "" || refused[0]["status"] != float64(503) {
		t.Errorf("a refusal's log does not say why: %v", refused[0])
	}
	if p := srv.Password(); p == "" || strings.Contains(logs.String(), p) {
		t.Errorf("the server's password (%q) is in the logs, or it has none", p)
	}
	// Every event is remembered as done, also those processed just as the
	// server went away: their handlers kept trying to record them until it
	// came back.
	for _, id := range ids {
		waitFor(t, "event "+id+" recorded as done", 20*time.Second, func() bool { return isDone(f.Stores[0], id) })
	}
}

// isDone says whether id is recorded as done in s. A claim it acquires
// (the id was free) is released at once.
func isDone(s webhook.ClaimStore, id string) bool {
	c, err := s.Claim(context.Background(), id)
	if err == nil && c.Status == webhook.ClaimAcquired {
		_ = s.Release(context.Background(), c)
	}
	return err == nil && c.Status == webhook.ClaimDone
}

// waitFor polls cond until it holds, and fails the test after limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
