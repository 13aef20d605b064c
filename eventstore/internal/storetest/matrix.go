package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// MatrixEnv turns the fault matrix on: it runs for minutes, so it is not
// part of the ordinary test run.
const MatrixEnv = "PAYMENTS_FAULT_MATRIX"

// The shape of a matrix run: as the issue that asked for it.
const (
	matrixEvents   = 2000
	matrixSenders  = 16
	matrixReplicas = 3
	// matrixAttemptTimeout is how long the sender waits for an answer
	// (paymentstest.DefaultWebhookTimeout).
	matrixAttemptTimeout = 10 * time.Second
	// matrixWork is how long the function works on an event.
	matrixWork = 5 * time.Millisecond
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
	// lives: a dead one's effects cannot happen) and the count of each
	// event's effects once the run is over.
	Setup func(tb testing.TB, f Fixture) (fn func(store webhook.Store, alive func() bool) webhook.EventFunc, effects func(ids []string) map[string]int)
}

// LedgerMode processes an event by counting it in a ledger in memory, after
// matrixWork: its effects are not in the database (the stores' default,
// at-least-once mode).
func LedgerMode() Mode {
	return Mode{Name: "default", Setup: func(testing.TB, Fixture) (func(webhook.Store, func() bool) webhook.EventFunc, func([]string) map[string]int) {
		l := NewLedger()
		fn := func(_ webhook.Store, alive func() bool) webhook.EventFunc {
			return func(ctx context.Context, ev *payments.Event) error {
				l.Call(ev.ID)
				time.Sleep(matrixWork)
				if !alive() {
					return ctx.Err() // a dead process does nothing more
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

// Fault is one fault of the matrix, injected once a third of the events
// were processed.
type Fault struct {
	Name   string
	Inject func(t *testing.T, srv Server, replicas *replicaSet)
}

// Faults are the matrix's faults; restart names the database's restart.
func Faults(restart string) []Fault {
	return []Fault{
		{"a replica killed (SIGKILL) and restarted 3 s later", func(t *testing.T, _ Server, rs *replicaSet) {
			rs.kill(0)
			time.Sleep(3 * time.Second)
			rs.start(0)
		}},
		{"database frozen 20 s (SIGSTOP)", func(t *testing.T, srv Server, _ *replicaSet) {
			srv.Freeze(t)
			time.Sleep(20 * time.Second)
			srv.Thaw(t)
		}},
		{restart, func(t *testing.T, srv Server, _ *replicaSet) {
			srv.Stop(t)
			time.Sleep(4 * time.Second)
			srv.Start(t)
		}},
	}
}

// MatrixRow is the outcome of one run.
type MatrixRow struct {
	Store, Mode, Fault       string
	Once, Twice, Never       int
	Answered5xx, TimedOut    int
	Slowest, Slowest503      time.Duration
	EventsPerSecond          float64
	Deliveries, SenderFailed int
}

// String is the row in Markdown.
func (r MatrixRow) String() string {
	return fmt.Sprintf("| %s | %s | %s | %d | %d | %d | %d | %v | %v | %d | %d of %d | %.0f |", r.Store, r.Mode, r.Fault,
		r.Once, r.Twice, r.Never, r.Answered5xx, r.Slowest503.Round(time.Millisecond), r.Slowest.Round(time.Millisecond), r.TimedOut,
		r.SenderFailed, r.Deliveries, r.EventsPerSecond)
}

// MatrixHeader is the Markdown header of the rows.
const MatrixHeader = "| Store | Mode | Fault | Processed once | Twice | Never | 5xx answered | Slowest 503 | Slowest answer | No answer in 10 s | Deliveries given up after 5 attempts | Events/s |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

// FaultMatrix runs every fault against every mode on b (a server of its own
// each time, from b.Outage), and logs the table. It skips unless MatrixEnv
// is 1. Each run: three replicas with pools of their own, 2,000 events each
// delivered 2 to 4 times by 16 concurrent senders that retry like the
// sandbox (1, 2, 4, 8 s; 10 s per attempt), round-robin over the replicas.
// It fails when an event was never processed, and, in an ExactlyOnce mode,
// when one was processed twice (elsewhere a replica killed between its
// effects and its record may leave one processed twice: it is counted).
func FaultMatrix(t *testing.T, b Backend, store string, faults []Fault, modes ...Mode) {
	if os.Getenv(MatrixEnv) != "1" {
		t.Skipf("the fault matrix runs for minutes: set %s=1", MatrixEnv)
	}
	var rows []string
	for _, mode := range modes {
		for _, fault := range faults {
			t.Run(mode.Name+"/"+fault.Name, func(t *testing.T) {
				row := matrixRun(t, b, mode, fault)
				row.Store = store
				rows = append(rows, row.String())
				if row.Never > 0 {
					t.Errorf("%d events never processed", row.Never)
				}
				if mode.ExactlyOnce && row.Twice > 0 {
					t.Errorf("%d events processed twice", row.Twice)
				}
			})
		}
	}
	t.Logf("fault matrix:\n%s\n%s", MatrixHeader, joinLines(rows))
}

func joinLines(rows []string) string {
	out := ""
	for i, r := range rows {
		if i > 0 {
			out += "\n"
		}
		out += r
	}
	return out
}

func matrixRun(t *testing.T, b Backend, mode Mode, fault Fault) MatrixRow {
	f, srv := b.Outage(t, 1, 0)
	fn, effects := mode.Setup(t, f)
	rs := newReplicaSet(t, f, fn, matrixReplicas)
	ids := make([]string, matrixEvents)
	for i := range ids {
		ids[i] = NewEventID(t)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("delivery order seed %d", seed)
	bodies := deliveries(rand.New(rand.NewPCG(seed, 1)), ids)

	var (
		stats   senderStats
		nextIdx atomic.Int64
		wg      sync.WaitGroup
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
		time.Sleep(10 * time.Millisecond)
	}
	fault.Inject(t, srv, rs)
	wg.Wait()
	elapsed := time.Since(start)
	rs.shutdown(t)

	row := MatrixRow{Mode: mode.Name, Fault: fault.Name, EventsPerSecond: float64(matrixEvents) / elapsed.Seconds(), Deliveries: len(bodies)}
	for _, n := range effects(ids) {
		switch {
		case n == 0:
			row.Never++
		case n == 1:
			row.Once++
		default:
			row.Twice++
		}
	}
	stats.fill(&row)
	t.Logf("%s / %s: %d deliveries in %v, answers %v", mode.Name, fault.Name, len(bodies), elapsed.Round(time.Millisecond), stats.answers.String())
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
