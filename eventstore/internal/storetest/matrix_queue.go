package storetest

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// QueueBackend runs the fault matrix on a queue path (pgstore.Queue): a
// receiver that hands off (webhook.NewQueueHandler: verifies, enqueues the
// event once and answers, with no claim), and workers that run the
// function in the transaction that completes the job.
type QueueBackend struct {
	// Start starts a server of the run's own and prepares the queue's
	// tables and the merchant's.
	Start func(tb testing.TB) (QueueRun, Server)
}

// QueueRun is one run's queue, shared by its processes.
type QueueRun struct {
	// Process starts one process: receiver and workers on a pool of its
	// own whose connections dial makes. Its function calls work(ctx, id)
	// first, then records the event in the merchant's table inside the
	// job's transaction.
	Process func(dial Dialer, work func(ctx context.Context, id string) error) QueueProcess
	// Effects counts each event's rows in the merchant's table.
	Effects func(ids []string) map[string]int
	// Jobs counts the queue's jobs of events (River's JobList): one per
	// event, whatever the duplicates and faults, since an enqueue that
	// finds its event writes nothing. Nil skips the check.
	Jobs func() int
}

// QueueProcess is one process of a QueueRun.
type QueueProcess struct {
	// Enqueue is the receiver's: what its webhook.NewQueueHandler hands
	// each delivery to.
	Enqueue webhook.EnqueueFunc
	// Reconcile enqueues listed events through the same unique insert.
	Reconcile func(context.Context, iter.Seq2[*payments.Event, error]) (webhook.ReconcileResult, error)
	// Stop stops the process's workers, waiting for running jobs until
	// ctx ends.
	Stop func(context.Context) error
}

// QueueMode is the name of the Queue's rows.
const QueueMode = "Queue"

// QueueFaults are the Queue's rows: a worker process killed mid-job (its
// jobs wait for River's rescuer), the database frozen, the database
// restarted, and a receiver process killed between the enqueue's commit
// and its answer; restart describes the database's restart.
func QueueFaults(restart string) []Fault {
	fs := Faults(restart)
	killedWorker := Fault{"killed worker", func(sz matrixSize) string {
		return fmt.Sprintf("a worker process killed (SIGKILL) mid-job and restarted %v later", sz.killedFor)
	}, func(t *testing.T, _ Server, rs *replicaSet, sz matrixSize, _ func() bool) {
		in := rs.waitFor(t, "a job running at a process", func(in *incarnation) bool { return in.running.Load() > 0 })
		rs.killedJobs.Add(in.running.Load())
		rs.killedAt.Store(time.Now().UnixNano())
		rs.killIncarnation(in)
		time.Sleep(sz.killedFor)
		rs.start(in.index)
	}}
	killedReceiver := Fault{"killed receiver", func(sz matrixSize) string {
		return fmt.Sprintf("a receiver process killed (SIGKILL) between an enqueue's commit and its answer, restarted %v later", sz.killedFor)
	}, func(t *testing.T, _ Server, rs *replicaSet, sz matrixSize, _ func() bool) {
		rs.killAfterInsert.Store(true)
		select {
		case in := <-rs.killedAfterInsert:
			time.Sleep(sz.killedFor)
			rs.start(in.index)
		case <-time.After(time.Minute):
			t.Error("no enqueue committed within a minute: the receiver was never killed")
		}
	}}
	return []Fault{killedWorker, fs[1], fs[2], killedReceiver}
}

// waitFor returns the first current process that meets cond, polling.
func (rs *replicaSet) waitFor(t *testing.T, what string, cond func(*incarnation) bool) *incarnation {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		rs.mu.Lock()
		cur := append([]*incarnation(nil), rs.cur...)
		rs.mu.Unlock()
		for _, in := range cur {
			if in.alive() && cond(in) {
				return in
			}
		}
	}
	t.Fatalf("waited a minute for %s", what)
	return nil
}

// QueueMatrix runs QueueFaults on b, as FaultMatrix does for stores, and
// logs one "matrix row:" line per fault in the same format (mode
// QueueMode). Each run: three processes, each a receiver and workers with
// a pool of their own, behind a round-robin; the matrix's senders and
// events; a function that works matrixWork (one event in slowEvery
// matrixSlowWork) then writes one row per event in the job's transaction.
// Events whose every delivery the sender gave up are reconciled through
// the queue. It fails when an event has no row once the queue is drained,
// when one has two, when a delivery was answered a 5xx other than 503,
// when a 503 came later than Matrix503Bound, and when the fault hit nothing.
func QueueMatrix(t *testing.T, b QueueBackend, store, restart string) {
	sz := sizeFromEnv(t)
	seed := seedFromEnv(t)
	var rows []string
	for _, fault := range QueueFaults(restart) {
		t.Run(QueueMode+"/"+fault.Name, func(t *testing.T) {
			row := queueRun(t, b, fault, sz, seed)
			row.Store = store
			rows = append(rows, row.String())
			t.Logf("matrix row: %s", row)
			if row.Never > 0 {
				t.Errorf("%d events never processed", row.Never)
			}
			if row.Twice > 0 {
				t.Errorf("%d events processed twice", row.Twice)
			}
			if row.Overlaps > 0 {
				t.Errorf("%d runs started while another run of their event still worked on a live process", row.Overlaps)
			}
			if row.Slowest503 > Matrix503Bound {
				t.Errorf("a 503 came after %v, later than the bound of %v", row.Slowest503, Matrix503Bound)
			}
		})
	}
	t.Logf("fault matrix, Queue (%s, seed %d):\n%s\n%s", sz.name, seed, MatrixHeader, strings.Join(rows, "\n"))
}

func queueRun(t *testing.T, b QueueBackend, fault Fault, sz matrixSize, seed uint64) MatrixRow {
	run, srv := b.Start(t)
	w := newWorker()
	rs := &replicaSet{t: t, cur: make([]*incarnation, matrixReplicas), killedAfterInsert: make(chan *incarnation, 1)}
	var procs sync.Map // *incarnation -> QueueProcess
	rs.build = func(in *incarnation) {
		in.store = &DeadStore{} // refuses nothing: only its Kill flag is used
		p := run.Process(in.dial, func(ctx context.Context, id string) error {
			in.running.Add(1)
			defer in.running.Add(-1)
			return w.Do(ctx, id, in.alive)
		})
		procs.Store(in, p)
		enqueue := func(ctx context.Context, ev *payments.Event) error {
			if !in.alive() {
				return errDead
			}
			err := p.Enqueue(ctx, ev)
			if err == nil && rs.killAfterInsert.CompareAndSwap(true, false) {
				rs.killIncarnation(in) // committed, never answered
				rs.killedAfterInsertHits.Add(1)
				rs.killedAfterInsert <- in
			}
			return err
		}
		in.h = webhook.NewQueueHandler(Verifier(t), enqueue)
		in.stop = p.Stop
	}
	for i := range matrixReplicas {
		rs.start(i)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	ids := make([]string, sz.events)
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x-%016x", rng.Uint64(), rng.Uint64())
	}
	bodies := deliveries(rng, ids)
	w.setSlow(ids, sz.slowEvery)

	var (
		stats    senderStats
		nextIdx  atomic.Int64
		wg       sync.WaitGroup
		finished atomic.Bool
	)
	start := time.Now()
	for range matrixSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(nextIdx.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				stats.send(rs, bodies[i])
			}
		}()
	}
	for nextIdx.Load() < int64(len(bodies)/3) {
		time.Sleep(time.Millisecond)
	}
	injected := make(chan struct{})
	go func() {
		defer close(injected)
		fault.Inject(t, srv, rs, sz, finished.Load)
	}()
	wg.Wait()
	finished.Store(true)
	<-injected
	row := MatrixRow{Mode: QueueMode, Fault: fault.Describe(sz), Seed: seed, Deliveries: len(bodies)}
	// Events no delivery enqueued (the sender gave up every copy) are
	// the merchant's Reconcile's: through the same unique insert.
	row.Recovered = queueReconcile(t, rs, &procs, ids)
	// Drain: every event's job runs to its commit; a killed worker's jobs
	// wait for River's rescuer.
	drained := time.Now().Add(5 * time.Minute)
	for len(neverDelivered(ids, run.Effects)) > 0 && time.Now().Before(drained) {
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	// With the default settings a killed worker's jobs are rescued soon
	// after their timeout: every event processed within two minutes of
	// the kill.
	if at := rs.killedAt.Load(); at != 0 && len(neverDelivered(ids, run.Effects)) == 0 {
		if d := time.Since(time.Unix(0, at)); d > 2*time.Minute {
			t.Errorf("the last event was processed %v after the worker's kill, want within 2 minutes", d.Round(time.Second))
		} else {
			t.Logf("every event processed %v after the worker's kill", d.Round(time.Second))
		}
	}
	row.EventsPerSecond = float64(sz.events) / elapsed.Seconds()
	rs.shutdown(t)

	counts := run.Effects(ids)
	if run.Jobs != nil {
		if n := run.Jobs(); n != len(ids) {
			t.Errorf("%d jobs for %d events: an event was enqueued more than once (or never)", n, len(ids))
		}
	}
	for _, id := range ids {
		switch n := counts[id]; {
		case n == 0:
			row.Never++
			t.Logf("event %s never processed", id)
		case n == 1:
			row.Once++
		default:
			row.Twice++
		}
	}
	stats.fill(&row)
	row.Overlaps = w.Overlaps()
	t.Logf("%s / %s: %d deliveries, drained in %v, answers %v", QueueMode, row.Fault, len(bodies), elapsed.Round(time.Millisecond), stats.answers.String())
	for code, n := range stats.answers.snapshot() {
		if code >= 500 && code != http.StatusServiceUnavailable {
			t.Errorf("%d deliveries answered %d: the Queue answers 200 or 503", n, code)
		}
	}
	switch fault.Name {
	case "killed worker":
		if rs.killedJobs.Load() == 0 {
			t.Error("no job was running at the process killed: the row proved nothing")
		}
	case "killed receiver":
		if rs.killedAfterInsertHits.Load() == 0 {
			t.Error("no enqueue had committed unanswered at the process killed: the row proved nothing")
		}
	case "frozen store", "restarted store":
		if stats.answers.Count(http.StatusServiceUnavailable) == 0 {
			t.Error("no delivery was answered 503: the fault hit no enqueue")
		}
	}
	return row
}

// queueReconcile enqueues every event through a live process's Reconcile,
// as a merchant's schedule does, until it fails no more (at most five
// runs), and returns how many it enqueued: those no delivery brought.
func queueReconcile(t *testing.T, rs *replicaSet, procs *sync.Map, ids []string) int {
	list := func(yield func(*payments.Event, error) bool) {
		for _, id := range ids {
			ev, err := payments.ParseEvent(EventBody(id))
			if !yield(ev, err) {
				return
			}
		}
	}
	enqueued := 0
	for try := 1; ; try++ {
		in := rs.live()
		p, _ := procs.Load(in)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := p.(QueueProcess).Reconcile(ctx, list)
		cancel()
		enqueued += res.Enqueued
		if err == nil {
			if enqueued > 0 {
				t.Logf("%d events enqueued by no delivery (the sender gave up): reconciled", enqueued)
			}
			return enqueued
		}
		if try == 5 {
			t.Errorf("reconcile after the run: %v", err)
			return enqueued
		}
		time.Sleep(time.Second)
	}
}
