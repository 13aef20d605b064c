package outcometest

import (
	"github.com/paymentsapi/payments-go/internal/testhook"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// Replica is one receiver's view of the shared stores.
type Replica struct {
	Events   webhook.ClaimStore
	Outcomes outcome.Store
	// Wrap, when set, makes the handler's function from the tracker and
	// the merchant's function (default: tr.Wrap(fn)).
	Wrap func(tr *outcome.Tracker, fn webhook.EventFunc) webhook.EventFunc
}

// ReplicaOpener returns two replicas over one fresh shared backing; stores
// that log conflicts themselves log to logger.
type ReplicaOpener func(tb testing.TB, logger *slog.Logger) [2]Replica

// plan is the events of one subject and the outcome they must leave.
type plan struct {
	id, ref  string
	events   []planned
	want     outcome.State
	conflict bool
	late     bool // the opening event comes after the final one
}

type planned struct {
	id   string
	typ  payments.EventType
	body []byte
}

// plans makes n payments and n/2 recipients: every final kind, some with a
// conflicting second final event, each with its opening event.
func plans(n int) []*plan {
	var ps []*plan
	finals := []payments.EventType{payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected}
	for i := 0; i < n; i++ {
		p := &plan{id: NewID("pay-"), ref: NewID("order-")}
		add := func(typ payments.EventType) {
			id := NewID("ev-")
			p.events = append(p.events, planned{id: id, typ: typ, body: Body(id, typ, p.id, p.ref)})
		}
		final := finals[i%3]
		add(payments.EventPaymentInitiated)
		add(final)
		p.want = outcome.State(strings.TrimPrefix(string(final), "payment."))
		if i%5 == 4 {
			add(finals[(i+1)%3]) // a second, different final event
			p.conflict = true
		}
		ps = append(ps, p)
	}
	for i := 0; i < n/2; i++ {
		p := &plan{id: NewID("rcp-")}
		add := func(typ payments.EventType) {
			id := NewID("ev-")
			p.events = append(p.events, planned{id: id, typ: typ, body: Body(id, typ, p.id, "")})
		}
		add(payments.EventRecipientCreated)
		if i%2 == 0 {
			add(payments.EventRecipientVerified)
			p.want = outcome.StateVerified
		} else {
			add(payments.EventRecipientVerificationFailed)
			p.want = outcome.StateVerificationFailed
		}
		ps = append(ps, p)
	}
	return ps
}

// delivery is one delivery of an event: to which replica.
type delivery struct {
	plan    *plan
	event   planned
	replica int
}

// schedule returns two phases of deliveries, each shuffled. Each event is
// delivered 1 to 3 times, to either replica. The opening event of every
// other subject is held back to the second phase (it comes late, after the
// final one: a backward event), and so is every conflicting second final
// event (so that which final came first is known), with more duplicates
// of the first phase's events.
func schedule(ps []*plan, rng *rand.Rand) [2][]delivery {
	var phases [2][]delivery
	for n, p := range ps {
		for k, e := range p.events {
			phase := 0
			if (k == 0 && n%2 == 0) || k == 2 {
				phase = 1
			}
			p.late = n%2 == 0
			for c := 0; c < 1+rng.IntN(3); c++ {
				phases[phase] = append(phases[phase], delivery{plan: p, event: e, replica: rng.IntN(2)})
			}
			if phase == 0 && rng.IntN(2) == 0 {
				phases[1] = append(phases[1], delivery{plan: p, event: e, replica: rng.IntN(2)})
			}
		}
	}
	for _, ds := range phases {
		rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	}
	return phases
}

// Replicas delivers late, duplicated and reordered signed events to two
// handlers, each with a tracker, sharing the replicas' stores, from several
// senders at once. It checks that every subject ends in its state, that no
// observed state ever moves back from final, that each event reaches the
// merchant's function once, that conflicts are recorded with both event ids
// and logged, and that the duplicates wrote nothing (one step per event).
func Replicas(t *testing.T, open ReplicaOpener) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&logs, &logMu}, nil))
	rs := open(t, logger)
	ctx := Ctx(t)
	calls := map[string]*atomic.Int64{}
	ps := plans(30)
	for _, p := range ps {
		for _, e := range p.events {
			calls[e.id] = new(atomic.Int64)
		}
	}
	var handlers [2]http.Handler
	trackers := [2]*outcome.Tracker{}
	for i, r := range rs {
		trackers[i] = outcome.NewTracker(r.Outcomes, outcome.WithLogger(logger))
		fn := func(_ context.Context, ev *payments.Event) error {
			calls[ev.ID].Add(1)
			return nil
		}
		wrapped := trackers[i].Wrap(fn)
		if r.Wrap != nil {
			wrapped = r.Wrap(trackers[i], fn)
		}
		handlers[i] = webhook.NewHandler(Verifier(t), wrapped, webhook.WithClaimStore(r.Events))
	}
	seed := uint64(time.Now().UnixNano())
	phases := schedule(ps, rand.New(rand.NewPCG(seed, 26)))
	t.Logf("schedule seed %d", seed)

	// A watcher reads every subject while deliveries run: a final state,
	// once seen, must never change.
	stop := make(chan struct{})
	watched := make(chan error, 1)
	go func() {
		seen := map[string]outcome.State{}
		for {
			for _, p := range ps {
				o, err := rs[1].Outcomes.Load(ctx, p.id)
				if err != nil {
					continue
				}
				if was, ok := seen[p.id]; ok && was != o.State {
					watched <- fmt.Errorf("%s moved from %s to %s", p.id, was, o.State)
					return
				}
				if o.State.Final() {
					seen[p.id] = o.State
				}
			}
			select {
			case <-stop:
				watched <- nil
				return
			default:
			}
		}
	}()

	for _, ds := range phases {
		deliverAll(t, handlers, ds)
	}
	close(stop)
	if err := <-watched; err != nil {
		t.Fatal(err)
	}

	for _, p := range ps {
		o, err := rs[0].Outcomes.Load(ctx, p.id)
		if err != nil {
			t.Fatalf("%s: %v", p.id, err)
		}
		if o.State != p.want {
			t.Errorf("%s ended %s, want %s (steps %+v)", p.id, o.State, p.want, o.Steps)
		}
		if len(o.Steps) != len(p.events) {
			t.Errorf("%s has %d steps for %d events: a duplicate was recorded or an event lost", p.id, len(o.Steps), len(p.events))
		}
		if p.ref != "" {
			if byRef, err := rs[1].Outcomes.Load(ctx, p.ref); err != nil || byRef.ID != p.id {
				t.Errorf("Load(%s) by reference = %v, %v", p.ref, byRef.ID, err)
			}
		}
		switch {
		case p.conflict && (o.Conflict == nil || o.Conflict.FirstEvent != p.events[1].id || o.Conflict.SecondEvent != p.events[2].id):
			t.Errorf("%s: conflict %+v, want first %s second %s", p.id, o.Conflict, p.events[1].id, p.events[2].id)
		case p.conflict && !strings.Contains(logs.String(), `"second_event":"`+p.events[2].id+`"`):
			t.Errorf("%s: the conflict was not logged with both event ids", p.id)
		case !p.conflict && o.Conflict != nil:
			t.Errorf("%s: unexpected conflict %v", p.id, o.Conflict)
		}
		if p.late {
			for _, st := range o.Steps {
				if st.EventID == p.events[0].id && st.Effect != outcome.EffectBackward {
					t.Errorf("%s: the late %s was not recorded as backward: %+v", p.id, st.EventType, st)
				}
			}
		}
		for _, e := range p.events {
			if n := calls[e.id].Load(); n != 1 {
				t.Errorf("event %s reached the function %d times, want once", e.id, n)
			}
		}
	}
	t.Logf("%d+%d deliveries of %d events about %d subjects", len(phases[0]), len(phases[1]), len(calls), len(ps))
}

// deliverAll sends ds from six concurrent senders.
func deliverAll(t *testing.T, handlers [2]http.Handler, ds []delivery) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for s := 0; s < 6; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ds) {
					return
				}
				d := ds[i]
				// 409: a concurrent delivery holds the event; the sender
				// retries, as the service does.
				for attempt := 0; ; attempt++ {
					code := Deliver(handlers[d.replica], d.event.body)
					if code == http.StatusOK {
						break
					}
					if code != http.StatusConflict || attempt > 100 {
						t.Errorf("delivery of %s answered %d", d.event.id, code)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Records returns the JSON log lines of buf with message msg.
func Records(tb testing.TB, buf string, msg string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// StoreDown checks a receiver whose stores share one server that goes
// down: a delivery gets 503 (the claim store's claim fails first), the
// function does not run, nothing is marked (read through reader, another
// replica's store), and the service's retries after the restart record the
// outcome once. stop and start stop and restart the server.
func StoreDown(t *testing.T, r Replica, reader outcome.Store, stop, start func()) {
	tr := outcome.NewTracker(r.Outcomes)
	var calls atomic.Int64
	h := webhook.NewHandler(Verifier(t), tr.Wrap(func(context.Context, *payments.Event) error {
		calls.Add(1)
		return nil
	}), webhook.WithClaimStore(r.Events), testhook.HandlerClaimStoreTimeout(time.Second).(webhook.HandlerOption))
	body := Body("ev-1", payments.EventPaymentFailed, "pay-1", "order-1")
	stop()
	if code := Deliver(h, body); code != http.StatusServiceUnavailable {
		t.Fatalf("delivery with the store down answered %d, want 503", code)
	}
	start()
	if _, err := reader.Load(Ctx(t), "pay-1"); !errors.Is(err, outcome.ErrNotFound) || calls.Load() != 0 {
		t.Fatalf("after the refused delivery: %v and %d calls, want ErrNotFound and none", err, calls.Load())
	}
	deadline := time.Now().Add(time.Minute)
	for code := 0; code != http.StatusOK; {
		if time.Now().After(deadline) {
			t.Fatalf("the retries after the restart answered %d", code)
		}
		if code = Deliver(h, body); code != http.StatusOK { // the client reconnects
			time.Sleep(100 * time.Millisecond)
		}
	}
	o, err := reader.Load(Ctx(t), "order-1")
	if err != nil || o.State != outcome.StateFailed || len(o.Steps) != 1 || calls.Load() != 1 {
		t.Fatalf("after the retries: %+v %v, %d calls; want failed, one step, one call", o, err, calls.Load())
	}
}

// AwaitWoken checks that an Await on waiter (a Subscriber store) returns
// when another replica records the outcome, through the subscription: its
// poll interval is an hour, so that its first read after the one at the
// start would come after 36 seconds, past the test's 30-second bound.
func AwaitWoken(t *testing.T, r Replica, waiter outcome.Store) {
	if _, ok := waiter.(outcome.Subscriber); !ok {
		t.Fatalf("%T is not an outcome.Subscriber", waiter)
	}
	h := webhook.NewHandler(Verifier(t), outcome.NewTracker(r.Outcomes).Wrap(nil), webhook.WithClaimStore(r.Events))
	tr := outcome.NewTracker(waiter, PollInterval(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ { // one Await after the other: they share the subscription
		id := NewID("pay-")
		done := make(chan error, 1)
		go func() {
			res, err := tr.Await(ctx, id)
			if err == nil && res.State != outcome.StateCompleted {
				err = fmt.Errorf("state %s", res.State)
			}
			done <- err
		}()
		if code := Deliver(h, Body(NewID("ev-"), payments.EventPaymentCompleted, id, "r"+id)); code != http.StatusOK {
			t.Fatal(code)
		}
		if err := <-done; err != nil {
			t.Fatalf("Await %d: %v", i, err)
		}
	}
}
