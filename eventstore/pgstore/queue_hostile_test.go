package pgstore_test

// The receive path on PostgreSQL as the package doc recommends it
// (webhook.NewQueueHandler(verifier, queue.Enqueue)) against what a
// hostile or careless sender does: unsigned, forged, stale and oversized
// requests, replays of a signed delivery, events that come late, and a
// service that echoes the webhook secret and personal data. Each test
// counts the events the function processed once, twice and never, and
// what the Queue's table holds.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// callCounter counts the function's calls by event id.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

// fn is insertPaid that counts its calls first.
func (c *callCounter) fn(paid string) pgstore.TxEventFunc {
	return func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
		c.mu.Lock()
		if c.calls == nil {
			c.calls = map[string]int{}
		}
		c.calls[ev.ID]++
		c.mu.Unlock()
		return insertPaid(paid)(ctx, tx, ev)
	}
}

// tally is how many of ids the function processed once, twice or more,
// and never, counted from the merchant's rows (what committed) and
// checked against its calls: a call whose writes rolled back would be
// seen there.
func (c *callCounter) tally(tb testing.TB, pool *pgxpool.Pool, paid string, ids []string) (once, twice, never int) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		rows := rowsOf(tb, pool, paid, id)
		if rows != c.calls[id] {
			tb.Errorf("event %s: %d rows after %d calls of the function", id, rows, c.calls[id])
		}
		switch {
		case rows == 0:
			never++
		case rows == 1:
			once++
		default:
			twice++
		}
	}
	return once, twice, never
}

// signedRequest is a delivery of body signed with secret at ts, as the
// service sends it.
func signedRequest(body []byte, ts time.Time, secret string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, ts, secret))
	return req
}

func serve(h http.Handler, req *http.Request) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// Requests that must not reach the queue, to a Queue's handler with its
// workers running: no signature, another secret's, a body changed after
// signing, a signature from past or beyond the tolerance (an old delivery
// replayed, a clock far ahead), a body over the limit (with its
// Content-Length and chunked, both signed), another method, and a
// verified body that is no event. Each is refused with its status, the
// Queue's table holds nothing, River lists no job and the function never
// runs. The same events, then delivered as the service signs them, are
// each processed once.
func TestQueueHandlerEnqueuesNothingUnverified(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)

	now := time.Now()
	big := func() []byte { // a signed event over the handler's limit
		id := storetest.NewEventID(t)
		b := storetest.EventBody(id)
		return append(b[:len(b)-1], []byte(`,"padding":"`+strings.Repeat("x", webhook.DefaultMaxBodyBytes)+`"}`)...)
	}
	type attempt struct {
		name string
		want int
		req  func(body []byte) *http.Request
	}
	attempts := []attempt{
		{"no signature", http.StatusUnauthorized, func(b []byte) *http.Request {
			r := signedRequest(b, now, storetest.Secret)
			r.Header.Del(webhook.SignatureHeader)
			return r
		}},
		{"another secret", http.StatusUnauthorized, func(b []byte) *http.Request { return signedRequest(b, now, "whsec_not_the_merchants_secret") }},
		{"body changed after signing", http.StatusUnauthorized, func(b []byte) *http.Request {
			r := signedRequest(bytes.Replace(b, []byte(`"1500.00"`), []byte(`"9500.00"`), 1), now, storetest.Secret)
			r.Header.Set(webhook.SignatureHeader, webhook.SignPayload(b, now, storetest.Secret))
			return r
		}},
		{"signed 6 minutes ago (a replay)", http.StatusUnauthorized, func(b []byte) *http.Request {
			return signedRequest(b, now.Add(-webhook.DefaultSignatureTolerance-time.Minute), storetest.Secret)
		}},
		{"signed 6 minutes ahead", http.StatusUnauthorized, func(b []byte) *http.Request {
			return signedRequest(b, now.Add(webhook.DefaultSignatureTolerance+time.Minute), storetest.Secret)
		}},
		{"GET", http.StatusMethodNotAllowed, func(b []byte) *http.Request {
			r := signedRequest(b, now, storetest.Secret)
			r.Method = http.MethodGet
			return r
		}},
	}
	var ids []string
	var bodies [][]byte
	for _, a := range attempts {
		id := storetest.NewEventID(t)
		body := storetest.EventBody(id)
		if code := serve(h, a.req(body)); code != a.want {
			t.Errorf("%s: answered %d, want %d", a.name, code, a.want)
		}
		ids, bodies = append(ids, id), append(bodies, body)
	}
	for _, chunked := range []bool{false, true} {
		b := big()
		r := signedRequest(b, now, storetest.Secret)
		if chunked {
			r.ContentLength = -1 // no Content-Length: the limit is found while reading
		}
		if code := serve(h, r); code != http.StatusRequestEntityTooLarge {
			t.Errorf("a signed body over the limit (chunked %v): answered %d, want 413", chunked, code)
		}
	}
	if code := serve(h, signedRequest([]byte(`{"hello":"world"}`), now, storetest.Secret)); code != http.StatusBadRequest {
		t.Errorf("a verified body that is no event: answered %d, want 400", code)
	}
	if n := q.enqueued(t); n != 0 {
		t.Fatalf("the Queue's table holds %d events after requests that all failed verification, want none", n)
	}
	if jobs := q.jobs(t); len(jobs) != 0 {
		t.Fatalf("River lists %d jobs after requests that all failed verification, want none", len(jobs))
	}

	for _, b := range bodies {
		if code := storetest.Deliver(h, b); code != http.StatusOK {
			t.Fatalf("the same event signed as the service signs it: %d, want 200", code)
		}
	}
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == len(bodies) })
	once, twice, never := c.tally(t, pool, paid, ids)
	if once != len(ids) || twice != 0 || never != 0 {
		t.Errorf("events processed once %d, twice %d, never %d; want %d once", once, twice, never, len(ids))
	}
	if n := q.enqueued(t); n != len(ids) {
		t.Errorf("the Queue's table holds %d events, want %d", n, len(ids))
	}
}

// One signed delivery replayed byte for byte (headers included, within
// the signature's tolerance): at once from 20 senders over two replicas
// before any worker runs, and 10 times after its function committed (a
// late duplicate, after the body was cleared). Every replay is answered
// 200, the Queue's table holds the event once, River lists one job, and
// the function ran once; the other replica's worker ran nothing.
func TestQueueReplayedDeliveryEnqueuedOnce(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	other := q.replica(t, newPool(t, testPoolURL(t), 4), c.fn(paid))
	handlers := []http.Handler{
		webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue),
		webhook.NewQueueHandler(storetest.Verifier(t), other.Enqueue),
	}
	id := storetest.NewEventID(t)
	body := storetest.EventBody(id)
	signed := time.Now()
	replay := func(h http.Handler) int { return serve(h, signedRequest(body, signed, storetest.Secret)) }

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code := replay(handlers[i%2]); code != http.StatusOK {
				t.Errorf("a replay: %d, want 200", code)
			}
		}()
	}
	wg.Wait()
	if n, jobs := q.enqueued(t), len(q.jobs(t)); n != 1 || jobs != 1 {
		t.Fatalf("after 20 replays at once: %d events in the Queue's table and %d jobs, want 1 and 1", n, jobs)
	}
	start(t, q.Queue)
	start(t, other)
	eventually(t, time.Minute, "the job completed", func() bool { return q.jobStates(t, pool)["completed"] == 1 })
	for i := range 10 {
		if code := replay(handlers[i%2]); code != http.StatusOK {
			t.Errorf("a replay after the commit: %d, want 200", code)
		}
	}
	if body, ok := q.bodyOf(t, id); !ok || body != nil {
		t.Errorf("after the late replays the Queue's table holds %q (row: %v), want the id with no body", body, ok)
	}
	if s := q.jobStates(t, pool); s["completed"] != 1 || len(s) != 1 {
		t.Errorf("jobs by state %v after the late replays, want one completed", s)
	}
	once, twice, never := c.tally(t, pool, paid, []string{id})
	if once != 1 || twice != 0 || never != 0 {
		t.Errorf("the event processed once %d, twice %d, never %d; want once", once, twice, never)
	}
}

// Events that come late, through the Queue's handler: a payment's opening
// event (payment.initiated) after its final one was processed, and the
// final one delivered again an hour's worth of retries later (a new
// signature). Each event's function runs once; the late opening event is
// recorded as a backward step and the payment stays completed; the late
// duplicate enqueues nothing.
func TestQueueLateEvents(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), nil)
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue)
	payID, ref := outcometest.NewID("pay-"), outcometest.NewID("order-")
	final, opening := outcometest.NewID("ev-"), outcometest.NewID("ev-")
	finalBody := outcometest.Body(final, payments.EventPaymentCompleted, payID, ref)
	if code := storetest.Deliver(h, finalBody); code != http.StatusOK {
		t.Fatalf("payment.completed: %d", code)
	}
	tracker := q.Tracker()
	if res, err := tracker.Await(testCtx(t), payID); err != nil || res.State != outcome.StateCompleted {
		t.Fatalf("Await after payment.completed: %+v, %v", res, err)
	}
	for _, b := range [][]byte{outcometest.Body(opening, payments.EventPaymentInitiated, payID, ref), finalBody} {
		if code := storetest.Deliver(h, b); code != http.StatusOK {
			t.Fatalf("a late delivery: %d, want 200", code)
		}
	}
	eventually(t, time.Minute, "both jobs completed", func() bool { return q.jobStates(t, pool)["completed"] == 2 })
	o, err := tracker.Get(testCtx(t), payID)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != outcome.StateCompleted || len(o.Steps) != 2 || o.Steps[1].EventID != opening || o.Steps[1].Effect != outcome.EffectBackward {
		t.Errorf("the payment after the late opening event: %+v, want completed with the late step recorded backward", o)
	}
	once, twice, never := c.tally(t, pool, paid, []string{final, opening})
	if once != 2 || twice != 0 || never != 0 {
		t.Errorf("events processed once %d, twice %d, never %d; want 2 once", once, twice, never)
	}
	if n, s := q.enqueued(t), q.jobStates(t, pool); n != 2 || s["completed"] != 2 || len(s) != 1 {
		t.Errorf("the Queue's table holds %d events and River's jobs are %v, want 2 events and 2 jobs completed", n, s)
	}
}

// A service (or a proxy) that echoes the webhook secret and a payer's
// personal data in every member of the event and in a header, to a
// Queue's handler that logs (WithLogger) on a Queue that logs (its
// Logger): deliveries that verify, one signed with another secret, and
// one to a process whose database is down (503, its error logged). No log
// line holds the secret or the personal data, River's jobs hold the
// event's id alone, and each verified event is processed once.
func TestQueueEchoedSecretsReachNoLogNorJob(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	paid := merchantTable(t, pool)
	logs := &storetest.Logs{}
	var c callCounter
	q := newQueue(t, pool, c.fn(paid), &pgstore.QueueConfig{Logger: logs.Logger()})
	start(t, q.Queue)
	h := webhook.NewQueueHandler(storetest.Verifier(t), q.Enqueue, webhook.WithLogger(logs.Logger()))
	const personal = "Adaeze Okonkwo-Whitfield, adaeze@example.com, 0123456789"
	echoed := func(id string) []byte {
		b, err := json.Marshal(map[string]any{
			"id": id, "event": "payment.completed", "created_at": time.Now().UTC().Format(time.RFC3339),
			"data": map[string]any{
				"id": "pay-" + id[:8], "reference": storetest.Secret, "status": "completed", "amount": "1500.00", "currency": "NGN",
				"narration": storetest.Secret + " " + personal, "payer": map[string]any{"name": personal, "email": storetest.Secret},
				"metadata": map[string]any{"echo": storetest.Secret, "customer": personal},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send := func(h http.Handler, body []byte, secret string) int {
		r := signedRequest(body, time.Now(), secret)
		r.Header.Set("X-Echo", storetest.Secret+" "+personal)
		return serve(h, r)
	}
	var ids []string
	for range 3 {
		id := storetest.NewEventID(t)
		if code := send(h, echoed(id), storetest.Secret); code != http.StatusOK {
			t.Fatalf("an echoing delivery: %d, want 200", code)
		}
		ids = append(ids, id)
	}
	forged := storetest.NewEventID(t)
	if code := send(h, echoed(forged), "whsec_an_attackers_own"); code != http.StatusUnauthorized {
		t.Errorf("a forged echoing delivery: %d, want 401", code)
	}
	// A process whose database is down: its enqueue fails and is logged.
	down, err := pgxpool.New(context.Background(), "postgres://merchant:"+dbPassword+"@127.0.0.1:1/payments?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	dq, err := pgstore.NewQueue(down, c.fn(paid), &pgstore.QueueConfig{Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	unreachable := storetest.NewEventID(t)
	if code := send(webhook.NewQueueHandler(storetest.Verifier(t), dq.Enqueue, webhook.WithLogger(logs.Logger())), echoed(unreachable), storetest.Secret); code != http.StatusServiceUnavailable {
		t.Errorf("a delivery to a process whose database is down: %d, want 503", code)
	}
	eventually(t, time.Minute, "every job completed", func() bool { return q.jobStates(t, pool)["completed"] == len(ids) })
	once, twice, never := c.tally(t, pool, paid, append(ids, forged, unreachable))
	if once != len(ids) || twice != 0 || never != 2 {
		t.Errorf("events processed once %d, twice %d, never %d; want %d once and the forged and unreachable ones never", once, twice, never, len(ids))
	}
	all := logs.String()
	if !strings.Contains(all, "the event could not be enqueued") || !strings.Contains(all, "invalid signature") {
		t.Fatalf("the logs miss the refusals the test looks through:\n%s", all)
	}
	for _, s := range []string{storetest.Secret, "Adaeze", "adaeze@example.com", "0123456789", dbPassword} {
		if strings.Contains(all, s) {
			t.Errorf("a log line holds %q:\n%s", s, all)
		}
	}
	for _, j := range q.jobs(t) {
		var args map[string]any
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatal(err)
		}
		if len(args) != 1 || args["id"] == nil {
			t.Errorf("a River job's args are %s, want the event's id alone", j.EncodedArgs)
		}
	}
}
