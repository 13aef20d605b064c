package paymentstest

import (
	"sync"
	"time"
)

// defaultLogLimit is how many entries each log of the server keeps when
// withLogLimit is not given: the last 10,000 requests, the last 10,000
// events and the last 10,000 webhook deliveries.
const defaultLogLimit = 10000

// RequestRecord is one request as the server saw it.
type RequestRecord struct {
	Method string
	// Path is the escaped request path.
	Path           string
	IdempotencyKey string
	// StatusCode is the status answered, or 0 when the connection was
	// dropped (a Fault with Drop) or the client went away.
	StatusCode int
	// Stan is the stan of the answer ("" when none was made).
	Stan string
	// Replayed is true when the answer was an idempotent replay.
	Replayed bool
	// Fault names the fault injected into this request (see Fault): "status",
	// "drop", "drop_after_work" or "latency"; "" when none was.
	Fault string
	// Notes are remarks on requests the server accepted leniently, such as
	// an amount sent as a JSON string instead of a number.
	Notes []string
	// At is the server's time when the request arrived.
	At time.Time
}

// ring keeps the last limit values appended, oldest first. Appending costs
// O(1) whether or not the ring is full: once full, the newest value
// overwrites the oldest in place. The buffer grows as values come, so a
// large limit costs nothing until it is used. The zero ring is not usable:
// make one with newRing. It is not safe for concurrent use.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest value once the ring is full
	limit int
}

func newRing[T any](limit int) ring[T] { return ring[T]{limit: limit} }

func (r *ring[T]) add(v T) {
	if len(r.buf) < r.limit {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start++
	if r.start == r.limit {
		r.start = 0
	}
}

// each calls f on every value, oldest first.
func (r *ring[T]) each(f func(int, T)) {
	n := len(r.buf)
	for i := range n {
		f(i, r.buf[(r.start+i)%n])
	}
}

func (r *ring[T]) len() int { return len(r.buf) }

type requestLog struct {
	mu      sync.Mutex
	entries ring[RequestRecord]
}

func (l *requestLog) add(r RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries.add(r)
}

// Requests returns the requests the server has received, oldest first: the
// last 10,000 of them, or as many as Sandbox.LogLimit says. Requests to
// the admin API (WithSandbox) are not in it.
func (s *Server) Requests() []RequestRecord {
	s.reqs.mu.Lock()
	defer s.reqs.mu.Unlock()
	out := make([]RequestRecord, s.reqs.entries.len())
	s.reqs.entries.each(func(i int, r RequestRecord) {
		r.Notes = append([]string(nil), r.Notes...)
		out[i] = r
	})
	return out
}
