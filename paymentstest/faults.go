package paymentstest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// faultKind says how an injected fault breaks a request.
type faultKind int

// The kinds of fault.
const (
	// faultStatus answers with Fault.Status (and Retry-After when
	// Fault.RetryAfter is positive) without doing the work.
	faultStatus faultKind = iota + 1
	// faultDrop closes the connection without an answer, before doing the
	// work: the client sees a connection error and nothing happened.
	faultDrop
	// faultDropAfterWork does the work, stores the answer for idempotent
	// replay, then closes the connection without sending it: the client sees
	// a connection error although the operation took effect. A retry with
	// the same Idempotency-Key gets the stored answer.
	faultDropAfterWork
	// faultLatency makes the request take Fault.Latency longer, then
	// serves it normally, as an overloaded service would: the wait comes
	// where SetLatency's does (after the Idempotency-Key is reserved, before
	// the work), and a client that gives up during it abandons the request.
	faultLatency
)

// String names the fault kind: "status", "drop" or "drop_after_work".
func (k faultKind) String() string {
	switch k {
	case faultStatus:
		return "status"
	case faultDrop:
		return "drop"
	case faultDropAfterWork:
		return "drop_after_work"
	case faultLatency:
		return "latency"
	}
	return fmt.Sprintf("faultKind(%d)", int(k))
}

// Fault describes requests to break: the one way to inject faults
// (InjectFault). Give exactly one of Status, Drop or Latency:
//
//   - Status answers with that HTTP status (400 to 599) and an error
//     envelope, without doing the work; RetryAfter, when positive, is sent
//     as a Retry-After header (whole seconds, rounded up).
//   - Drop closes the connection without an answer, before doing the work:
//     the client sees a connection error and nothing happened. With
//     AfterWork it does the work first and stores the answer for idempotent
//     replay: the lost-response case that idempotency keys exist for.
//   - Latency makes the request take that much longer, then serves it
//     normally, as an overloaded service would: the wait comes after the
//     Idempotency-Key is reserved, before the work, and a client that gives
//     up during it abandons the request.
//
// A fault breaks the next Times matching requests (at least 1). With a
// positive Rate it is random instead, for chaos tests: it breaks each
// matching request with probability Rate until ClearFaults, its draws coming
// from a PCG generator seeded with Seed, one request at a time in the order
// requests arrive, so that the same seed and order give the same faults (log
// the seed of a failing run to replay it). Counted faults apply before
// random ones, each request taking the first that matches it, in the order
// they were injected. Faults strike before authentication, as a proxy or the
// network would. RequestRecord.Fault names the fault that broke a request.
type Fault struct {
	Status     int
	RetryAfter time.Duration
	Drop       bool
	AfterWork  bool
	Latency    time.Duration
	// Times is how many requests a counted fault breaks (at least 1).
	Times int
	// Method and Path, when set, restrict the fault to requests with that
	// method and that exact path, such as "/payments/initiate".
	Method string
	Path   string
	// Rate, from 0 to 1, makes the fault random (see above); Seed seeds it.
	Rate float64
	Seed uint64

	kind faultKind // what the fields above say; set by InjectFault
}

type pendingFault struct {
	Fault
	left int
}

type faultQueue struct {
	mu       sync.Mutex
	pending  []*pendingFault
	injected int
	random   []*randomFault // the faults with a Rate, in injection order
}

// checkFault sets f.kind from f's fields, or reports why f cannot be
// injected.
func checkFault(f *Fault) error {
	n := 0
	if f.Status != 0 {
		n++
		f.kind = faultStatus
		if f.Status < 400 || f.Status > 599 {
			return fmt.Errorf("paymentstest: a Fault's Status must be from 400 to 599, not %d", f.Status)
		}
	}
	if f.Drop {
		n++
		f.kind = faultDrop
		if f.AfterWork {
			f.kind = faultDropAfterWork
		}
	}
	if f.Latency != 0 {
		n++
		f.kind = faultLatency
		if f.Latency < 0 {
			return fmt.Errorf("paymentstest: a Fault's Latency must be positive, not %s", f.Latency)
		}
	}
	switch {
	case n != 1:
		return errors.New("paymentstest: a Fault needs exactly one of Status, Drop or Latency")
	case f.AfterWork && !f.Drop:
		return errors.New("paymentstest: a Fault's AfterWork goes with Drop")
	case f.RetryAfter != 0 && f.Status == 0:
		return errors.New("paymentstest: a Fault's RetryAfter goes with Status")
	case math.IsNaN(f.Rate) || f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("paymentstest: a Fault's Rate must be from 0 to 1, not %v", f.Rate)
	}
	return nil
}

// InjectFault adds a fault (see Fault). It returns an error, and injects
// nothing, for a fault that does not give exactly one of Status (400 to
// 599), Drop or a positive Latency, or whose Rate is outside 0 to 1.
func (s *Server) InjectFault(f Fault) error {
	if err := checkFault(&f); err != nil {
		return err
	}
	if f.Times < 1 {
		f.Times = 1
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if f.Rate > 0 {
		s.faults.random = append(s.faults.random, &randomFault{f: f,
			rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))})
		return nil
	}
	s.faults.pending = append(s.faults.pending, &pendingFault{Fault: f, left: f.Times})
	return nil
}

// failNext answers the next n requests with status and an error envelope,
// without doing their work; retryAfter, when positive, is sent as a
// Retry-After header. A status outside 400 to 599 is sent as 500.
func (s *Server) failNext(n, status int, retryAfter time.Duration) {
	if n < 1 {
		return
	}
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	_ = s.InjectFault(Fault{Status: status, RetryAfter: retryAfter, Times: n})
}

// dropNext closes the connection of the next n requests without answering
// and without doing their work.
func (s *Server) dropNext(n int) {
	if n >= 1 {
		_ = s.InjectFault(Fault{Drop: true, Times: n})
	}
}

// dropNextAfterWork does the work of the next n requests, stores their
// answers for idempotent replay, and closes their connections without
// answering: the lost-response case that idempotency keys exist for.
func (s *Server) dropNextAfterWork(n int) {
	if n >= 1 {
		_ = s.InjectFault(Fault{Drop: true, AfterWork: true, Times: n})
	}
}

// ClearFaults removes every fault injected so far, random ones included.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = nil
	s.faults.random = nil
}

// faultsInjected returns how many requests a fault has broken so far.
func (s *Server) faultsInjected() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.injected
}

// pendingFaults returns how many requests pending faults will still break.
func (s *Server) pendingFaults() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	n := 0
	for _, f := range s.faults.pending {
		n += f.left
	}
	return n
}

// take returns the fault that breaks this request, if any: the first
// pending fault that matches it, else the first random one that strikes.
func (q *faultQueue) take(method, path string) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, f := range q.pending {
		if (f.Method != "" && f.Method != method) || (f.Path != "" && f.Path != path) {
			continue
		}
		f.left--
		if f.left <= 0 {
			q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
		}
		q.injected++
		return f.Fault, true
	}
	for _, r := range q.random {
		if f, ok := r.pick(method, path); ok {
			q.injected++
			return f, true
		}
	}
	return Fault{}, false
}

// faultResponse is the answer of a faultStatus.
func (s *Server) faultResponse(f Fault) *response {
	r := s.fail(f.Status, payments.ErrorCode(codeForStatus(f.Status)),
		fmt.Sprintf("%s (fault injected by paymentstest)", http.StatusText(f.Status)))
	if f.RetryAfter > 0 {
		r.withHeader("Retry-After", retryAfterSeconds(f.RetryAfter))
	}
	return r
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
		return
	}
	// Not hijackable (HTTP/2): net/http's documented way to abort a
	// response, which it recovers from silently.
	panic(http.ErrAbortHandler)
}

// setLatency makes the server take d over each request's work (0 turns it
// off). The wait comes after the Idempotency-Key is reserved, so a retry
// arriving meanwhile sees 409 idempotency_in_progress. A client that gives up
// during the wait (its context ends) abandons the request: nothing is done.
func (s *Server) setLatency(d time.Duration) {
	if d < 0 {
		d = 0
	}
	s.latency.Store(int64(d))
}
