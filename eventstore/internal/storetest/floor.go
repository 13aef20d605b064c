package storetest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// The floor benchmarks (BenchmarkFloor in each store's module) run our
// webhook.Handler and a hand-written receiver with the same guarantee, side
// by side in one run, on the same server, under the same load:
// FloorSenders goroutines deliver over FloorReplicas handlers (each on a
// pool or client of its own, as replicas would be), and each event is
// delivered 2 to 4 times (2, 3, 4 in turn: two thirds of the deliveries
// are duplicates). Within each block of floorBlock deliveries the order is
// shuffled (with a fixed seed, the same for every side), so that most
// duplicates come after the first delivery settled and some while it runs.
const (
	FloorSenders  = 16
	FloorReplicas = 3
	floorBlock    = 300
)

// FloorPlan is the deliveries of one run: b.N deliveries of Events()
// distinct events.
type FloorPlan struct {
	// IDs are the events' ids, in the order they were made.
	IDs    []string
	bodies [][]byte
	order  []int // delivery i carries bodies[order[i]]
}

// NewFloorPlan makes the plan of n deliveries.
func NewFloorPlan(tb testing.TB, n int) *FloorPlan {
	p := &FloorPlan{}
	for len(p.order) < n {
		ev := len(p.IDs)
		id := NewEventID(tb)
		p.IDs = append(p.IDs, id)
		p.bodies = append(p.bodies, EventBody(id))
		for range 2 + ev%3 {
			p.order = append(p.order, ev)
		}
	}
	p.order = p.order[:n] // the last event keeps at least one delivery
	r := rand.New(rand.NewPCG(29, uint64(n)))
	for lo := 0; lo < n; lo += floorBlock {
		block := p.order[lo:min(lo+floorBlock, n)]
		r.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
	}
	return p
}

// Events is how many distinct events the plan delivers.
func (p *FloorPlan) Events() int { return len(p.IDs) }

// FloorMetrics are what one run of one side measured, by unit: per
// delivery unless the unit says otherwise.
type FloorMetrics map[string]float64

// FloorRun delivers the plan to handlers, delivery i to handlers[i %
// len(handlers)], from FloorSenders goroutines, each signing its delivery
// just before it calls ServeHTTP. The benchmark's timer runs around the
// deliveries alone. Every delivery must be answered 200 (processed, or a
// duplicate) or 409 (in progress elsewhere). A 409 is not the end of a
// delivery: the sender delivers it again later, as the service does, once
// the plan's other deliveries are taken (floorQueue), so a receiver that
// answers 409 pays for the delivery it causes, and one that waits pays
// with its wait. It measures deliveries/s (of the plan, redeliveries
// included in the time), the answer's latency at the 50th and 99th
// percentile (ServeHTTP alone, every call; the sender's wait over loopback
// HTTP with EnvFloorHTTP), the process's CPU per delivery
// (getrusage: handlers, senders, driver, GC), and the redeliveries that 409
// answers caused.
func FloorRun(b *testing.B, p *FloorPlan, handlers []http.Handler) FloorMetrics {
	m, _ := FloorRunSenders(b, p, handlers, FloorSenders)
	return m
}

// FloorRunSenders is FloorRun from senders goroutines; it also returns
// when the first delivery was sent, for a benchmark that measures until
// the events were processed after their answers (BenchmarkQueue).
func FloorRunSenders(b *testing.B, p *FloorPlan, handlers []http.Handler, senders int) (FloorMetrics, time.Time) {
	n := len(p.order)
	q := newFloorQueue(n)
	lats := make([][]time.Duration, senders)
	var redelivered atomic.Int64
	var failure atomic.Value
	var wg sync.WaitGroup
	d := newFloorDeliverer(b, handlers, senders)
	defer d.close()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	start := time.Now()
	for sender := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, n/senders+16)
			defer func() { lats[sender] = lat }()
			for {
				i, ok := q.take()
				if !ok {
					return
				}
				send := d.prepare(i%len(handlers), p.bodies[p.order[i]])
				t0 := time.Now()
				code := send()
				lat = append(lat, time.Since(t0))
				switch code {
				case http.StatusOK:
					q.done(i, false)
				case http.StatusConflict:
					redelivered.Add(1)
					q.done(i, true)
				default:
					failure.CompareAndSwap(nil, fmt.Sprintf("delivery %d answered %d", i, code))
					q.done(i, false)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu1, _ := processCPU()
	if f := failure.Load(); f != nil {
		b.Fatal(f)
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	m := FloorMetrics{
		"deliveries/s":          float64(n) / elapsed.Seconds(),
		"p50-us":                micros(all[len(all)/2]),
		"p99-us":                micros(all[min(len(all)-1, len(all)*99/100)]),
		"redeliveries/delivery": float64(redelivered.Load()) / float64(n),
	}
	if cpuOK {
		m["cpu-us/delivery"] = micros(cpu1-cpu0) / float64(n)
	}
	return m, start
}

// floorQueue hands out the plan's deliveries, then those to deliver again:
// a delivery answered 409 goes back to the queue, and is taken once every
// delivery of the plan was and at least floorRetryAfter after its 409, so
// that the first delivery of its event has had time to settle, as the
// service's later retry would find it.
type floorQueue struct {
	mu       sync.Mutex
	cond     sync.Cond
	next, n  int
	again    []floorRetry
	inFlight int
}

type floorRetry struct {
	i     int
	after time.Time
}

// floorRetryAfter is the least time between a 409 and the delivery it
// causes: far less than a real sender's pause (a second or more), so that
// redeliveries do not idle the run.
const floorRetryAfter = 10 * time.Millisecond

func newFloorQueue(n int) *floorQueue {
	q := &floorQueue{n: n}
	q.cond.L = &q.mu
	return q
}

// take returns the next delivery, or false when every delivery was
// answered and none is to be delivered again.
func (q *floorQueue) take() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		switch {
		case q.next < q.n:
			q.next++
			q.inFlight++
			return q.next - 1, true
		case len(q.again) > 0:
			r := q.again[0]
			if wait := time.Until(r.after); wait > 0 {
				q.mu.Unlock()
				time.Sleep(wait)
				q.mu.Lock()
				continue
			}
			q.again = q.again[1:]
			q.inFlight++
			return r.i, true
		case q.inFlight == 0:
			return 0, false
		}
		q.cond.Wait() // a delivery in flight may come back
	}
}

// done records that delivery i was answered; again puts it back.
func (q *floorQueue) done(i int, again bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight--
	if again {
		q.again = append(q.again, floorRetry{i, time.Now().Add(floorRetryAfter)})
	}
	q.cond.Broadcast()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// FloorOnce counts how many times each event was processed.
type FloorOnce struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one processing of id.
func (o *FloorOnce) Add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[id]++
}

// Count is how many distinct events were processed.
func (o *FloorOnce) Count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.n)
}

// Check fails the benchmark unless every event of the plan was processed
// exactly once: the runs have no faults, so every side must manage that.
func (o *FloorOnce) Check(b *testing.B, p *FloorPlan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	never, twice := 0, 0
	for _, id := range p.IDs {
		switch c := o.n[id]; {
		case c == 0:
			never++
		case c > 1:
			twice++
		}
	}
	if never != 0 || twice != 0 || len(o.n) != len(p.IDs) {
		b.Fatalf("%d events: %d never processed, %d more than once, %d processed in all", len(p.IDs), never, twice, len(o.n))
	}
}

// HandWritten is the frame of a hand-written receiver: it reads the body,
// verifies the signature (with Verifier: the same in-process cost as ours),
// parses the event, and answers what receive returns, called with the
// request's context bounded by timeout (0: not bounded).
func HandWritten(tb testing.TB, timeout time.Duration, receive func(ctx context.Context, ev *payments.Event) int) http.Handler {
	v := Verifier(tb)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, webhook.DefaultMaxBodyBytes))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		if v.Verify(body, req.Header) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ev, err := payments.ParseEvent(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ctx := req.Context()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		w.WriteHeader(receive(ctx, ev))
	})
}
