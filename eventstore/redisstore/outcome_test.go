package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// commandCounter counts the commands a client sends, alone or in a
// pipeline: reads, and the rest.
type commandCounter struct{ reads, writes atomic.Int64 }

func (c *commandCounter) count(cmd redis.Cmder) {
	switch strings.ToLower(cmd.Name()) {
	case "hmget", "get", "smembers":
		c.reads.Add(1)
	case "hello", "client":
	default:
		c.writes.Add(1)
	}
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// outcomeStores opens two outcome stores and two claim stores, each pair on
// a client of its own, under one fresh prefix of the server at url.
func outcomeStores(tb testing.TB, url string, c *commandCounter) ([2]*redisstore.OutcomeStore, [2]*redisstore.ClaimStore, string) {
	tb.Helper()
	prefix := uniquePrefix(tb, newClient(tb, url, 2))
	var ost [2]*redisstore.OutcomeStore
	var es [2]*redisstore.ClaimStore
	for i := range ost {
		client := newClient(tb, url, 16)
		if c != nil && i == 0 {
			client.AddHook(c)
		}
		o, err := redisstore.NewOutcomeStore(client, redisstore.WithPrefix(prefix+"outcome:"), redisstore.WithTimeout(time.Second))
		if err != nil {
			tb.Fatal(err)
		}
		e, err := redisstore.NewClaimStore(client, redisstore.WithPrefix(prefix+"event:"), redisstore.WithTimeout(time.Second))
		if err != nil {
			tb.Fatal(err)
		}
		ost[i], es[i] = o, e
	}
	return ost, es, prefix + "outcome:"
}

func TestOutcomeStoreConformance(t *testing.T) {
	t.Parallel()
	outcometest.Conformance(t, func(tb testing.TB) [2]outcome.Store {
		ost, _, _ := outcomeStores(tb, testservers.SharedRedis(tb).URL(), nil)
		return [2]outcome.Store{ost[0], ost[1]}
	})
}

func TestOutcomeStoreReplicas(t *testing.T) {
	t.Parallel()
	outcometest.Replicas(t, func(tb testing.TB, _ *slog.Logger) [2]outcometest.Replica {
		ost, es, _ := outcomeStores(tb, testservers.SharedRedis(tb).URL(), nil)
		return [2]outcometest.Replica{{Events: es[0], Outcomes: ost[0]}, {Events: es[1], Outcomes: ost[1]}}
	})
}

// A duplicate, and an event that repeats the state, cost one read and no
// write.
func TestOutcomeStoreNoWriteForDuplicate(t *testing.T) {
	t.Parallel()
	var c commandCounter
	ost, _, _ := outcomeStores(t, testservers.SharedRedis(t).URL(), &c)
	tr := outcome.NewTracker(ost[0])
	ctx := testCtx(t)
	ev := outcometest.Event(t, "ev-1", payments.EventPaymentCompleted, "pay-1", "order-1")
	if _, eff, err := tr.Apply(ctx, ev); err != nil || eff != outcome.EffectForward {
		t.Fatal(eff, err)
	}
	reads, writes := c.reads.Load(), c.writes.Load()
	if writes != 5 { // SADD and PEXPIRE of the reference, the script, SREM of the open set, PUBLISH
		t.Fatalf("the first event sent %d writes, want 5", writes)
	}
	again := outcometest.Event(t, "ev-2", payments.EventPaymentCompleted, "pay-1", "order-1")
	for _, e := range []*payments.Event{ev, ev, again} {
		if _, eff, err := tr.Apply(ctx, e); err != nil || eff != outcome.EffectNone {
			t.Fatal(eff, err)
		}
	}
	if c.writes.Load() != writes || c.reads.Load() != reads+3 {
		t.Fatalf("two duplicates and a repeat: %d reads, %d writes; want 3 and 0", c.reads.Load()-reads, c.writes.Load()-writes)
	}
	o, err := ost[1].Load(ctx, "order-1")
	if err != nil || o.State != outcome.StateCompleted || len(o.Steps) != 1 {
		t.Fatalf("%+v %v", o, err)
	}
}

// Redis is down: the delivery gets 503 (the claim store's claim fails
// first), nothing is marked, and the retry after the restart records the
// outcome once.
func TestOutcomeStoreDown(t *testing.T) {
	t.Parallel()
	srv := testservers.StartRedis(t, true)
	ost, es, _ := outcomeStores(t, srv.URL(), nil)
	outcometest.StoreDown(t, outcometest.Replica{Events: es[0], Outcomes: ost[0]}, ost[1], func() { srv.Stop(t) }, func() { srv.Start(t) })
}

// Await returns in a second process when the webhook went to this one.
func TestOutcomeAwaitInAnotherProcess(t *testing.T) {
	t.Parallel()
	url := testservers.SharedRedis(t).URL()
	ost, es, prefix := outcomeStores(t, url, nil)
	h := webhook.NewHandler(outcometest.Verifier(t), outcome.NewTracker(ost[0]).Wrap(nil), webhook.WithClaimStore(es[0]))
	wait := outcometest.AwaitInChild(t, "TestOutcomeAwaitChild", "rcp-42",
		"PAYMENTS_OUTCOME_CHILD_REDIS_URL="+url, "PAYMENTS_OUTCOME_CHILD_REDIS_PREFIX="+prefix)
	for _, body := range [][]byte{
		outcometest.Body("ev-41", payments.EventRecipientCreated, "rcp-42", ""),
		outcometest.Body("ev-42", payments.EventRecipientVerificationFailed, "rcp-42", ""),
	} {
		if code := outcometest.Deliver(h, body); code != http.StatusOK {
			t.Fatal(code)
		}
	}
	if got := wait(); got != "verification_failed ev-42" {
		t.Fatalf("the other process's Await said %q", got)
	}
}

// TestOutcomeAwaitChild is the second process of
// TestOutcomeAwaitInAnotherProcess; skipped in a normal run.
func TestOutcomeAwaitChild(t *testing.T) {
	outcometest.RunChild(t, func() *outcome.Tracker {
		s, err := redisstore.NewOutcomeStore(newClient(t, os.Getenv("PAYMENTS_OUTCOME_CHILD_REDIS_URL"), 4),
			redisstore.WithPrefix(os.Getenv("PAYMENTS_OUTCOME_CHILD_REDIS_PREFIX")))
		if err != nil {
			t.Fatal(err)
		}
		return outcome.NewTracker(s, outcometest.PollInterval(50*time.Millisecond))
	})
}

func TestNewOutcomeStoreBadOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, opt := range []redisstore.Option{redisstore.WithPrefix(""), redisstore.WithRetention(time.Hour), redisstore.WithTimeout(0), redisstore.WithLease(time.Second)} {
		if _, err := redisstore.NewOutcomeStore(c, opt); !errors.Is(err, redisstore.ErrInvalidOption) {
			t.Fatalf("NewOutcomeStore: %v, want ErrInvalidOption", err)
		}
	}
	if _, err := redisstore.NewOutcomeStore(nil); !errors.Is(err, redisstore.ErrInvalidOption) {
		t.Fatalf("nil client: %v", err)
	}
}

// An Await in another replica returns through pub/sub, not a poll.
func TestOutcomeAwaitWokenByPubSub(t *testing.T) {
	t.Parallel()
	ost, es, _ := outcomeStores(t, testservers.SharedRedis(t).URL(), nil)
	outcometest.AwaitWoken(t, outcometest.Replica{Events: es[0], Outcomes: ost[0]}, ost[1])
}

// stackHook records, for each command a client sends, whether it ran on a
// goroutine whose stack holds frame.
type stackHook struct {
	frame   string
	on, off atomic.Int64
}

func (h *stackHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *stackHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		buf := make([]byte, 64<<10)
		if strings.Contains(string(buf[:runtime.Stack(buf, false)]), h.frame) {
			h.on.Add(1)
		} else {
			h.off.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *stackHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// On a client with ContextTimeoutEnabled, the outcome store sends each
// command from the caller's goroutine, as the claim store does: no
// goroutine per command.
func TestOutcomeStoreCommandsOnTheCallersGoroutine(t *testing.T) {
	t.Parallel()
	c := newClientWith(t, testservers.SharedRedis(t).URL(), 4, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	h := &stackHook{frame: "TestOutcomeStoreCommandsOnTheCallersGoroutine"}
	c.AddHook(h)
	s, err := redisstore.NewOutcomeStore(c, redisstore.WithPrefix(uniquePrefix(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	tr := outcome.NewTracker(s)
	ctx := testCtx(t)
	if _, _, err := tr.Apply(ctx, outcometest.Event(t, "ev-1", payments.EventPaymentCompleted, "pay-1", "order-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	if h.on.Load() == 0 || h.off.Load() != 0 {
		t.Errorf("%d commands on the caller's goroutine, %d on another; want all on the caller's", h.on.Load(), h.off.Load())
	}
}
