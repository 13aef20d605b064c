package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// The shape of a matrix run, whatever its size.
const (
	matrixSenders  = 16
	matrixReplicas = 3
	// matrixAttemptTimeout is how long the sender waits for an answer
	// (paymentstest.DefaultWebhookTimeout).
	matrixAttemptTimeout = 10 * time.Second
	// matrixWork is how long the function works on an event.
	matrixWork = 5 * time.Millisecond
	// Matrix503Bound is the latest a 503 may come: a claim bounded by the
	// store timeout, after a claim wait (webhook.DefaultClaimStoreTimeout +
	// webhook.DefaultClaimWait, the Handler's documented bound), plus one
	// second for the scheduling of a loaded 2-core machine. A later 503
	// fails the matrix.
	Matrix503Bound = webhook.DefaultClaimStoreTimeout + webhook.DefaultClaimWait + time.Second
)

// matrixRetryWaits are the sender's waits between attempts: the sandbox's.
var matrixRetryWaits = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// Mode is one way replicas process events in the matrix.
type Mode struct {
	Name string
	// ExactlyOnce says the effects commit with the record of the event:
	// then no event may be processed twice, whatever the fault.
	ExactlyOnce bool
	// Setup prepares a run on the fixture f and returns the function of a
	// replica on store (alive says whether the replica's process still
	// lives: a dead one's effects cannot happen), which does its work with
	// w.Do, and the count of each event's effects once the run is over.
	Setup func(tb testing.TB, f Fixture, w *Worker) (fn func(store webhook.ClaimStore, alive func() bool) webhook.EventFunc, effects func(ids []string) map[string]int)
}

// LedgerMode processes an event by counting it in a ledger in memory, after
// matrixWork: its effects are not in the database (the stores' default,
// at-least-once mode). A replica killed meanwhile never reports success: a
// dead process returns nothing, so its handler never completes the event.
func LedgerMode() Mode {
	return Mode{Name: "default", Setup: func(_ testing.TB, _ Fixture, w *Worker) (func(webhook.ClaimStore, func() bool) webhook.EventFunc, func([]string) map[string]int) {
		l := NewLedger()
		fn := func(_ webhook.ClaimStore, alive func() bool) webhook.EventFunc {
			return func(ctx context.Context, ev *payments.Event) error {
				l.Call(ev.ID)
				if err := w.Do(ctx, ev.ID, alive); err != nil {
					return err
				}
				l.Succeed(ev.ID)
				return nil
			}
		}
		effects := func(ids []string) map[string]int {
			m := make(map[string]int, len(ids))
			for _, id := range ids {
				m[id] = l.Successes(id)
			}
			return m
		}
		return fn, effects
	}}
}

// Fault is one fault of the matrix, injected once a third of the
// deliveries were made.
type Fault struct {
	// Name names the row's subtest (go test -run).
	Name string
	// Describe says what the fault does at a size, for the table.
	Describe func(sz matrixSize) string
	// Inject runs the fault; finished says when the senders are done (a
	// soak fault repeats until then).
	Inject func(t *testing.T, srv Server, rs *replicaSet, sz matrixSize, finished func() bool)
}

// Faults are the matrix's faults; restart describes the database's restart.
func Faults(restart string) []Fault {
	fs := []Fault{
		{"killed replica", func(sz matrixSize) string {
			return fmt.Sprintf("a replica killed (SIGKILL) and restarted %v later", sz.killedFor)
		}, func(t *testing.T, _ Server, rs *replicaSet, sz matrixSize, _ func() bool) {
			rs.kill(0)
			time.Sleep(sz.killedFor)
			rs.start(0)
		}},
		{"frozen store", func(sz matrixSize) string {
			return fmt.Sprintf("database frozen %v (SIGSTOP)", sz.frozenFor)
		}, func(t *testing.T, srv Server, _ *replicaSet, sz matrixSize, _ func() bool) {
			srv.Freeze(t)
			time.Sleep(sz.frozenFor)
			srv.Thaw(t)
		}},
		{"restarted store", func(sz matrixSize) string {
			return fmt.Sprintf("%s, %v down", restart, sz.downFor)
		}, func(t *testing.T, srv Server, _ *replicaSet, sz matrixSize, _ func() bool) {
			srv.Stop(t)
			time.Sleep(sz.downFor)
			srv.Start(t)
		}},
	}
	return fs
}

// soakFault kills the replicas in turn, one every 8 s, each restarted
// killedFor later, until the senders are done.
var soakFault = Fault{"repeated kills", func(sz matrixSize) string {
	return fmt.Sprintf("a replica killed (SIGKILL) every 8 s, restarted %v later, for the whole run", sz.killedFor)
}, func(t *testing.T, _ Server, rs *replicaSet, sz matrixSize, finished func() bool) {
	for i := 0; !finished(); i++ {
		rs.kill(i % matrixReplicas)
		time.Sleep(sz.killedFor)
		rs.start(i % matrixReplicas)
		for end := time.Now().Add(8*time.Second - sz.killedFor); time.Now().Before(end) && !finished(); {
			time.Sleep(100 * time.Millisecond)
		}
	}
}}

// MatrixRow is the outcome of one run.
type MatrixRow struct {
	Store, Mode, Fault string
	Seed               uint64
	Once, Twice, Never int
	Overlaps           int
	// Recovered counts the events no delivery processed, which Reconcile
	// then did; Never counts what is left after it.
	Recovered                int
	Answered5xx, TimedOut    int
	Slowest, Slowest503      time.Duration
	EventsPerSecond          float64
	Deliveries, SenderFailed int
}

// String is the row in Markdown.
func (r MatrixRow) String() string {
	return fmt.Sprintf("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %v | %v | %d | %d of %d | %.0f | %d |", r.Store, r.Mode, r.Fault, r.Seed,
		r.Once, r.Twice, r.Never, r.Overlaps, r.Answered5xx, r.Slowest503.Round(time.Millisecond), r.Slowest.Round(time.Millisecond), r.TimedOut,
		r.SenderFailed, r.Deliveries, r.EventsPerSecond, r.Recovered)
}

// MatrixHeader is the Markdown header of the rows.
const MatrixHeader = "| Store | Mode | Fault | Seed | Processed once | Twice | Never | Overlapping runs | 5xx answered | Slowest 503 | Slowest answer | No answer in 10 s | Deliveries given up after 5 attempts | Events/s | Recovered by Reconcile |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

// FaultMatrix runs every fault against every mode on b (a server of its own
// each time, from b.Outage), at the size MatrixEnv asks for (it skips
// without it), and logs the table, one "matrix row:" line per run. Each
// run: three replicas with pools of their own, events each delivered 2 to 4
// times by 16 concurrent senders that retry like the sandbox (1, 2, 4, 8 s;
// 10 s per attempt), round-robin over the replicas. Events that no delivery
// processed (the sender gave up every copy) are then run through
// Handler.Reconcile over the list of all events, as a merchant would, and
// counted as recovered. It fails when an event was never processed even so, when, in an ExactlyOnce mode, one was processed
// twice (elsewhere a replica killed between its effects and its record may
// leave one processed twice: it is counted), and when a 503 came later
// than Matrix503Bound.
func FaultMatrix(t *testing.T, b Backend, store string, faults []Fault, modes ...Mode) {
	sz := sizeFromEnv(t)
	seed := seedFromEnv(t)
	if sz.soak {
		faults = append(faults, soakFault)
	}
	var (
		mu   sync.Mutex
		rows []string
	)
	for _, mode := range modes {
		for _, fault := range faults {
			t.Run(mode.Name+"/"+fault.Name, func(t *testing.T) {
				row := matrixRun(t, b, mode, fault, sz, seed)
				row.Store = store
				mu.Lock()
				rows = append(rows, row.String())
				mu.Unlock()
				t.Logf("matrix row: %s", row)
				if row.Never > 0 {
					t.Errorf("%d events never processed", row.Never)
				}
				if mode.ExactlyOnce && row.Twice > 0 {
					t.Errorf("%d events processed twice", row.Twice)
				}
				if row.Overlaps > 0 {
					t.Errorf("%d runs started while another run of their event still worked on a live replica", row.Overlaps)
				}
				if row.Slowest503 > Matrix503Bound {
					t.Errorf("a 503 came after %v, later than the bound of %v", row.Slowest503, Matrix503Bound)
				}
			})
		}
	}
	t.Logf("fault matrix (%s, seed %d):\n%s\n%s", sz.name, seed, MatrixHeader, strings.Join(rows, "\n"))
}

func matrixRun(t *testing.T, b Backend, mode Mode, fault Fault, sz matrixSize, seed uint64) MatrixRow {
	f, srv := b.Outage(t, 1, 0)
	w := newWorker()
	fn, effects := mode.Setup(t, f, w)
	rs := newReplicaSet(t, f, fn, matrixReplicas)
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
	elapsed := time.Since(start)
	row := MatrixRow{Mode: mode.Name, Fault: fault.Describe(sz), Seed: seed, EventsPerSecond: float64(sz.events) / elapsed.Seconds(), Deliveries: len(bodies)}
	// Events the sender gave up on are the merchant's Reconcile's to
	// recover: counted, then never-processed is what is left after it.
	if lost := neverDelivered(ids, effects); len(lost) > 0 {
		t.Logf("%d events processed by no delivery (the sender gave up): %v; reconciling", len(lost), lost)
		row.Recovered = reconcileRun(t, rs, ids)
	}
	rs.shutdown(t)

	// An id missing from effects was never processed (the Transactional
	// mode's table has no row for it).
	counts := effects(ids)
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
	t.Logf("%s / %s: %d deliveries in %v, answers %v", mode.Name, row.Fault, len(bodies), elapsed.Round(time.Millisecond), stats.answers.String())
	switch fault.Name {
	case "killed replica", "repeated kills":
		if rs.killedInFlight.Load() == 0 {
			t.Error("no delivery was in flight at the replica killed: the row proved nothing")
		}
	case "frozen store", "restarted store":
		if stats.answers.Count(http.StatusServiceUnavailable) == 0 {
			t.Error("no delivery was answered 503: the fault hit no claim")
		}
	}
	return row
}

// senderStats counts what the senders saw.
type senderStats struct {
	answers             Answers
	mu                  sync.Mutex
	slowest, slowest503 time.Duration
	timedOut, failed    int
}

// send delivers body as the sandbox does: an attempt, then a retry after
// each wait of matrixRetryWaits while the answer is not 2xx.
func (s *senderStats) send(rs *replicaSet, body []byte) {
	for attempt := 0; ; attempt++ {
		code, took, timedOut := rs.next().deliver(body)
		s.answers.Add(code)
		s.mu.Lock()
		if timedOut {
			s.timedOut++
		} else if code != 0 {
			s.slowest = max(s.slowest, took)
			if code == http.StatusServiceUnavailable {
				s.slowest503 = max(s.slowest503, took)
			}
		}
		s.mu.Unlock()
		if code >= 200 && code <= 299 {
			return
		}
		if attempt == len(matrixRetryWaits) {
			s.mu.Lock()
			s.failed++
			s.mu.Unlock()
			return
		}
		time.Sleep(matrixRetryWaits[attempt])
	}
}

func (s *senderStats) fill(r *MatrixRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Slowest, r.Slowest503, r.TimedOut, r.SenderFailed = s.slowest, s.slowest503, s.timedOut, s.failed
	s.answers.mu.Lock()
	defer s.answers.mu.Unlock()
	codes := make([]int, 0, len(s.answers.counts))
	for c := range s.answers.counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		if c >= 500 {
			r.Answered5xx += s.answers.counts[c]
		}
	}
}
