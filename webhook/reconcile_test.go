package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// rcEvents returns n parsed events: the first has whEventID, so that
// whPayload's delivery is a delivery of it.
func rcEvents(t *testing.T, n int) []*payments.Event {
	t.Helper()
	evs := make([]*payments.Event, n)
	for i := range evs {
		body := whPayload()
		if i > 0 {
			body = whEventJSON(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), payments.EventPaymentCompleted, "")
		}
		ev, err := payments.ParseEvent(body)
		require.NoError(t, err)
		evs[i] = ev
	}
	return evs
}

// rcList is a listing that yields evs, then err when it is not nil; pulled
// counts the events taken from it.
func rcList(evs []*payments.Event, err error, pulled *atomic.Int64) iter.Seq2[*payments.Event, error] {
	return func(yield func(*payments.Event, error) bool) {
		for _, ev := range evs {
			if pulled != nil {
				pulled.Add(1)
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

// rcAt is the checkpoint at ev.
func rcAt(ev *payments.Event) webhook.Checkpoint {
	return webhook.Checkpoint{ID: ev.ID, CreatedAt: ev.CreatedAt}
}

// rcLines returns the JSON log lines with message msg.
func rcLines(t *testing.T, logs *testlog.Buffer, msg string) []map[string]any {
	t.Helper()
	lines, err := logs.JSONLines()
	require.NoError(t, err)
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// rcLogged counts, by event id, the log lines with message msg.
func rcLogged(t *testing.T, logs *testlog.Buffer, msg string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, l := range rcLines(t, logs, msg) {
		id, _ := l["event_id"].(string)
		n[id]++
	}
	return n
}

// A failing function and a panicking one do not stop the run: the others
// are processed, the failures released and named, and the checkpoint stays
// before the first of them. The next run processes them and moves the
// checkpoint to the end.
func TestReconcileCheckpointStopsBeforeAFailure(t *testing.T) {
	evs := rcEvents(t, 6)
	var fail atomic.Bool
	fail.Store(true)
	var rec whRecorder
	fn := rec.fn(func(int64) error { return nil })
	logs := new(testlog.Buffer)
	h := whHandler(t, func(ctx context.Context, ev *payments.Event) error {
		if fail.Load() && ev.ID == evs[2].ID {
			return errors.New("the order database is down")
		}
		if fail.Load() && ev.ID == evs[4].ID {
			panic("a bug")
		}
		return fn(ctx, ev)
	}, webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))

	res, err := h.Reconcile(context.Background(), rcList(evs, nil, nil))
	require.NoError(t, err, "failures are in the result, not the error")
	assert.Equal(t, webhook.ReconcileResult{Processed: 4, Failed: 2, FailedIDs: []string{evs[2].ID, evs[4].ID},
		Checkpoint: rcAt(evs[1])}, res)
	assert.Equal(t, map[string]int{evs[0].ID: 1, evs[1].ID: 1, evs[3].ID: 1, evs[5].ID: 1},
		rcLogged(t, logs, "event recovered by reconcile"))
	assert.Equal(t, map[string]int{evs[2].ID: 1, evs[4].ID: 1},
		rcLogged(t, logs, "reconcile: event processing failed; released for the next delivery"))
	sum := rcLines(t, logs, "reconcile finished")
	require.Len(t, sum, 1)
	assert.Equal(t, "WARN", sum[0]["level"])
	for k, v := range map[string]any{"recovered": 4.0, "already_done": 0.0, "in_progress": 0.0, "failed": 2.0, "checkpoint": evs[1].ID} {
		assert.Equal(t, v, sum[0][k], k)
	}

	fail.Store(false)
	res, err = h.Reconcile(context.Background(), rcList(evs, nil, nil))
	require.NoError(t, err)
	assert.Equal(t, webhook.ReconcileResult{Processed: 2, AlreadyDone: 4, Checkpoint: rcAt(evs[5])}, res)
	assert.EqualValues(t, 6, rec.successes.Load(), "each event's function succeeded once")
}

// An event another delivery holds is waited for like a delivery waits: done
// by the other within the wait, it counts as already done; released by it,
// it is processed here; still held at the end, it counts as in progress and
// holds the checkpoint back, while the events after it are processed.
func TestReconcileWaitsForAClaimHeldElsewhere(t *testing.T) {
	for name, c := range map[string]struct {
		settle func(*webhook.MemoryClaimStore, context.Context, webhook.Claim) error // nil: keep holding it
		want   webhook.ReconcileResult
	}{
		"completed in the wait": {(*webhook.MemoryClaimStore).Complete, webhook.ReconcileResult{Processed: 2, AlreadyDone: 1}},
		"released in the wait":  {(*webhook.MemoryClaimStore).Release, webhook.ReconcileResult{Processed: 3}},
		"held past the wait":    {nil, webhook.ReconcileResult{Processed: 2, InProgress: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			evs := rcEvents(t, 3)
			store := webhook.NewMemoryClaimStore(0)
			held, err := store.Claim(context.Background(), evs[1].ID)
			require.NoError(t, err)
			require.Equal(t, webhook.ClaimAcquired, held.Status)
			var rec whRecorder
			h := whHandler(t, rec.fn(whOK), webhook.WithClaimStore(store), webhook.WithClaimWait(time.Second))
			if c.settle != nil {
				time.AfterFunc(100*time.Millisecond, func() { assert.NoError(t, c.settle(store, context.Background(), held)) })
			}
			res, err := h.Reconcile(context.Background(), rcList(evs, nil, nil))
			require.NoError(t, err)
			c.want.Checkpoint = rcAt(evs[2])
			if c.want.InProgress > 0 {
				c.want.Checkpoint = rcAt(evs[0])
			}
			assert.Equal(t, c.want, res)
			assert.EqualValues(t, c.want.Processed, rec.calls.Load())
		})
	}
}

// A delivery that arrives while reconcile runs the event's function is a
// duplicate like any other: it waits, and gets 200 once reconcile's run
// completed, or 409 when its wait is shorter; the function runs once.
func TestReconcileAndADeliveryOfTheSameEvent(t *testing.T) {
	for name, c := range map[string]struct {
		wait time.Duration
		want int
	}{"200 after the wait": {webhook.DefaultClaimWait, http.StatusOK}, "409": {20 * time.Millisecond, http.StatusConflict}} {
		t.Run(name, func(t *testing.T) {
			evs := rcEvents(t, 1)
			running, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int64
			h := whHandler(t, func(context.Context, *payments.Event) error {
				if calls.Add(1) == 1 {
					close(running)
					<-release
				}
				return nil
			}, webhook.WithClaimWait(c.wait))
			done := make(chan webhook.ReconcileResult, 1)
			go func() {
				res, err := h.Reconcile(context.Background(), rcList(evs, nil, nil))
				assert.NoError(t, err)
				done <- res
			}()
			<-running
			answer := make(chan int, 1)
			go func() { answer <- whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code }()
			if c.want == http.StatusOK {
				select {
				case code := <-answer:
					t.Fatalf("the delivery was answered %d while reconcile held its event", code)
				case <-time.After(200 * time.Millisecond):
				}
			} else {
				assert.Equal(t, c.want, <-answer)
			}
			close(release)
			assert.Equal(t, 1, (<-done).Processed)
			if c.want == http.StatusOK {
				assert.Equal(t, c.want, <-answer)
			}
			assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
			assert.EqualValues(t, 1, calls.Load())
		})
	}
}

// A listing that fails midway: the events before the failure are processed,
// and returned with the error, which wraps the listing's. A 404 from the
// service after the first page matches payments.ErrListEventsUnavailable.
func TestReconcileListingErrorMidStream(t *testing.T) {
	evs := rcEvents(t, 3)
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	broken := errors.New("connection reset")
	res, err := h.Reconcile(context.Background(), rcList(evs, broken, nil))
	require.ErrorIs(t, err, broken)
	assert.Equal(t, webhook.ReconcileResult{Processed: 3, Checkpoint: rcAt(evs[2])}, res)

	srv := paymentstest.NewServer()
	defer srv.Close()
	ctx := context.Background()
	_, err = srv.Client().Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789",
		AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	require.NoError(t, err)
	_, err = srv.Client().VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example"})
	require.NoError(t, err)
	require.Len(t, srv.Events(), 3)
	var once sync.Once
	h = whHandler(t, func(context.Context, *payments.Event) error {
		once.Do(func() { // the first page is in: the next one fails
			assert.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusNotFound,
				Method: http.MethodGet, Path: "/webhooks/events"}))
		})
		return nil
	})
	res, err = h.Reconcile(ctx, srv.Client().Webhooks.ListEvents(ctx, &payments.EventListParams{Limit: 2}))
	require.ErrorIs(t, err, payments.ErrListEventsUnavailable)
	assert.Equal(t, 2, res.Processed)
	assert.Equal(t, srv.Events()[1].ID, res.Checkpoint.ID)
}

// TestReconcileUnreadablePageIsNotTheEnd: a listing whose page does not say
// whether more events follow (has_more absent: the service pages another
// way) ends Reconcile with an error matching
// payments.ErrEventPageUnreadable, its checkpoint at the last event
// processed: never a run that looks complete.
func TestReconcileUnreadablePageIsNotTheEnd(t *testing.T) {
	evs := rcEvents(t, 2)
	page := func(evs ...*payments.Event) string {
		var raws []string
		for _, ev := range evs {
			raws = append(raws, string(ev.RawJSON()))
		}
		return `{"events":[` + strings.Join(raws, ",") + `]`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		data := page(evs[0]) + `,"has_more":true}`
		if r.URL.Query().Get("after") != "" {
			data = page(evs[1]) + `,"next":"abc"}` // no has_more
		}
		fmt.Fprintf(w, `{"success":true,"message":"ok","stan":"s","data":%s}`, data)
	}))
	defer srv.Close()
	client, err := payments.NewClient("test-key", payments.WithBaseURL(srv.URL))
	require.NoError(t, err)
	var rec whRecorder
	h := whHandler(t, rec.fn(whOK))
	ctx := context.Background()
	res, err := h.Reconcile(ctx, client.Webhooks.ListEvents(ctx, nil))
	require.ErrorIs(t, err, payments.ErrEventPageUnreadable)
	assert.Equal(t, webhook.ReconcileResult{Processed: 1, Checkpoint: rcAt(evs[0])}, res)
}

// Cancelling the context stops the run: the function running is cancelled,
// its event released and not counted, the events after it untouched, and
// the error matches context.Canceled.
func TestReconcileCancellation(t *testing.T) {
	evs := rcEvents(t, 3)
	store := webhook.NewMemoryClaimStore(0)
	running := make(chan struct{})
	var calls atomic.Int64
	h := whHandler(t, func(ctx context.Context, ev *payments.Event) error {
		if calls.Add(1) == 2 {
			close(running)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}, webhook.WithClaimStore(store))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-running; cancel() }()
	start := time.Now()
	res, err := h.Reconcile(ctx, rcList(evs, nil, nil))
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, webhook.ReconcileResult{Processed: 1, Checkpoint: rcAt(evs[0])}, res)
	assert.EqualValues(t, 2, calls.Load(), "nothing after the cancelled event")
	for _, ev := range evs[1:] {
		c, err := store.Claim(context.Background(), ev.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.ClaimAcquired, c.Status, "event %s is free for the next delivery", ev.ID)
	}
}

// Shutdown waits for the function a reconcile runs, and the reconcile then
// stops before its next event with ErrShutdown; a reconcile started after
// Shutdown returns ErrShutdown at once, listing nothing.
func TestReconcileShutdown(t *testing.T) {
	evs := rcEvents(t, 3)
	running, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	h := whHandler(t, func(context.Context, *payments.Event) error {
		if calls.Add(1) == 2 {
			close(running)
			<-release
		}
		return nil
	})
	type outcome struct {
		res webhook.ReconcileResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.Reconcile(context.Background(), rcList(evs, nil, nil))
		done <- outcome{res, err}
	}()
	<-running
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- h.Shutdown(ctx)
	}()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while reconcile's function ran", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-shut)
	o := <-done
	require.ErrorIs(t, o.err, webhook.ErrShutdown)
	assert.Equal(t, 2, o.res.Processed)
	assert.Equal(t, evs[1].ID, o.res.Checkpoint.ID)
	assert.EqualValues(t, 2, calls.Load(), "no event started after Shutdown")

	var pulled atomic.Int64
	res, err := h.Reconcile(context.Background(), rcList(evs, nil, &pulled))
	require.ErrorIs(t, err, webhook.ErrShutdown)
	assert.Zero(t, res)
	assert.Zero(t, pulled.Load(), "nothing listed after Shutdown")
}
