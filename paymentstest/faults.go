package paymentstest

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// FaultKind says how an injected fault breaks a request.
type FaultKind int

// The kinds of fault.
const (
	// FaultStatus answers with Fault.Status (and Retry-After when
	// Fault.RetryAfter is positive) without doing the work.
	FaultStatus FaultKind = iota + 1
	// FaultDrop closes the connection without an answer, before doing the
	// work: the client sees a connection error and nothing happened.
	FaultDrop
	// FaultDropAfterWork does the work, stores the answer for idempotent
	// replay, then closes the connection without sending it: the client sees
	// a connection error although the operation took effect. A retry with
	// the same Idempotency-Key gets the stored answer.
	FaultDropAfterWork
	// FaultLatency makes the request take Fault.Latency longer, then
	// serves it normally, as an overloaded service would: the wait comes
	// where SetLatency's does (after the Idempotency-Key is reserved, before
	// the work), and a client that gives up during it abandons the request.
	FaultLatency
)

// String names the fault kind: "status", "drop" or "drop_after_work".
func (k FaultKind) String() string {
	switch k {
	case FaultStatus:
		return "status"
	case FaultDrop:
		return "drop"
	case FaultDropAfterWork:
		return "drop_after_work"
	case FaultLatency:
		return "latency"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault describes requests to break. Faults apply in the order they were
// injected: each request takes the first pending fault that matches it.
// Faults strike before authentication, as a proxy or the network would.
type Fault struct {
	Kind FaultKind
	// Status is the HTTP status of a FaultStatus, from 400 to 599.
	Status int
	// RetryAfter, when positive, is sent as a Retry-After header (in whole
	// seconds, rounded up) with a FaultStatus.
	RetryAfter time.Duration
	// Latency is how long a FaultLatency holds the request (positive).
	Latency time.Duration
	// Times is how many requests the fault breaks (at least 1).
	Times int
	// Method and Path, when set, restrict the fault to requests with that
	// method and that exact path, such as "/payments/initiate".
	Method string
	Path   string
}

type pendingFault struct {
	Fault
	left int
}

type faultQueue struct {
	mu       sync.Mutex
	pending  []*pendingFault
	injected int
	random   *randomFaults // nil when SetRandomFaults is off
}

// checkFault reports why f cannot be injected, or nil.
func checkFault(f Fault) error {
	switch f.Kind {
	case FaultStatus:
		if f.Status < 400 || f.Status > 599 {
			return fmt.Errorf("paymentstest: a FaultStatus needs a status from 400 to 599, not %d", f.Status)
		}
	case FaultLatency:
		if f.Latency <= 0 {
			return fmt.Errorf("paymentstest: a FaultLatency needs a positive Latency, not %s", f.Latency)
		}
	case FaultDrop, FaultDropAfterWork:
	default:
		return errors.New("paymentstest: unknown fault kind " + f.Kind.String())
	}
	return nil
}

// InjectFault adds a fault. It returns an error, and injects nothing, for an
// unknown kind, a FaultStatus whose status is not 400 to 599, or a
// FaultLatency without a positive Latency.
func (s *Server) InjectFault(f Fault) error {
	if err := checkFault(f); err != nil {
		return err
	}
	if f.Times < 1 {
		f.Times = 1
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = append(s.faults.pending, &pendingFault{Fault: f, left: f.Times})
	return nil
}

// FailNext answers the next n requests with status and an error envelope,
// without doing their work; retryAfter, when positive, is sent as a
// Retry-After header. A status outside 400 to 599 is sent as 500.
func (s *Server) FailNext(n, status int, retryAfter time.Duration) {
	if n < 1 {
		return
	}
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	_ = s.InjectFault(Fault{Kind: FaultStatus, Status: status, RetryAfter: retryAfter, Times: n})
}

// DropNext closes the connection of the next n requests without answering
// and without doing their work.
func (s *Server) DropNext(n int) {
	if n >= 1 {
		_ = s.InjectFault(Fault{Kind: FaultDrop, Times: n})
	}
}

// DropNextAfterWork does the work of the next n requests, stores their
// answers for idempotent replay, and closes their connections without
// answering: the lost-response case that idempotency keys exist for.
func (s *Server) DropNextAfterWork(n int) {
	if n >= 1 {
		_ = s.InjectFault(Fault{Kind: FaultDropAfterWork, Times: n})
	}
}

// ClearFaults removes every pending fault and turns random faults
// (SetRandomFaults) off.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = nil
	s.faults.random = nil
}

// FaultsInjected returns how many requests a fault has broken so far.
func (s *Server) FaultsInjected() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.injected
}

// PendingFaults returns how many requests pending faults will still break.
func (s *Server) PendingFaults() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	n := 0
	for _, f := range s.faults.pending {
		n += f.left
	}
	return n
}

// take returns the fault that breaks this request, if any: the first
// pending fault that matches it, else a random one (SetRandomFaults).
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
	if f, ok := q.random.pick(method, path); ok {
		q.injected++
		return f, true
	}
	return Fault{}, false
}

// faultResponse is the answer of a FaultStatus.
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

// SetLatency makes the server take d over each request's work (0 turns it
// off). The wait comes after the Idempotency-Key is reserved, so a retry
// arriving meanwhile sees 409 idempotency_in_progress. A client that gives up
// during the wait (its context ends) abandons the request: nothing is done.
func (s *Server) SetLatency(d time.Duration) {
	if d < 0 {
		d = 0
	}
	s.latency.Store(int64(d))
}
