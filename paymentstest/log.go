package paymentstest

import (
	"sync"
	"time"
)

// maxLogEntries bounds each log the server keeps (requests, events,
// deliveries), so that a long-running sandbox does not grow without end.
// The oldest entries go first.
const maxLogEntries = 10000

// RequestRecord is one request as the server saw it.
type RequestRecord struct {
	Method string
	// Path is the escaped request path.
	Path           string
	IdempotencyKey string
	// StatusCode is the status answered, or 0 when the connection was
	// dropped (FaultDrop, FaultDropAfterWork) or the client went away.
	StatusCode int
	// Stan is the stan of the answer ("" when none was made).
	Stan string
	// Replayed is true when the answer was an idempotent replay.
	Replayed bool
	// Fault is the kind of fault injected into this request, or 0.
	Fault FaultKind
	// Notes are remarks on requests the server accepted leniently, such as
	// an amount sent as a JSON string instead of a number.
	Notes []string
	// At is the server's time when the request arrived.
	At time.Time
}

type requestLog struct {
	mu      sync.Mutex
	entries []RequestRecord
}

func (l *requestLog) add(r RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = appendCapped(l.entries, r)
}

// Requests returns every request the server has received, oldest first (at
// most the last 10,000). Requests to the admin API (WithAdminAPI) are not
// in it.
func (s *Server) Requests() []RequestRecord {
	s.reqs.mu.Lock()
	defer s.reqs.mu.Unlock()
	out := make([]RequestRecord, len(s.reqs.entries))
	for i, r := range s.reqs.entries {
		r.Notes = append([]string(nil), r.Notes...)
		out[i] = r
	}
	return out
}

// appendCapped appends v, dropping the oldest entry past maxLogEntries.
func appendCapped[T any](list []T, v T) []T {
	if len(list) >= maxLogEntries {
		list = append(list[:0:0], list[len(list)-maxLogEntries+1:]...)
	}
	return append(list, v)
}
