package webhook

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// ClaimStatus says whether a Claim made the caller the owner of an event.
type ClaimStatus int

const (
	// ClaimAcquired: the caller now owns the event and must process it,
	// then call Complete (success) or Release (failure).
	ClaimAcquired ClaimStatus = iota + 1
	// ClaimInProgress: another delivery owns the event right now, and its
	// lease has not run out.
	ClaimInProgress
	// ClaimDone: the event was already processed successfully.
	ClaimDone
)

// String names the status.
func (s ClaimStatus) String() string {
	switch s {
	case ClaimAcquired:
		return "acquired"
	case ClaimInProgress:
		return "in progress"
	case ClaimDone:
		return "done"
	}
	return "ClaimStatus(" + strconv.Itoa(int(s)) + ")"
}

// Claim is an Store's answer to a claim on an event id.
type Claim struct {
	// EventID is the id that was claimed.
	EventID string
	// Status says whether the caller now owns the event.
	Status ClaimStatus
	// Token identifies this claim among every claim ever made on the id.
	// Complete and Release act only while the claim holding this token
	// still owns the event, so a replica whose lease ran out can never
	// settle the claim another replica took over. Set when Status is
	// ClaimAcquired.
	Token string
	// LeaseExpires is when an unsettled claim lapses, so that another
	// delivery may take the event over (its owner may have died). The
	// handler cancels your EventFunc's context at that moment. The zero
	// time means the claim never lapses (MemoryStore: it lives and
	// dies with the process).
	LeaseExpires time.Time
}

// ErrClaimLost is returned by an Store's Complete or Release when the
// claim is no longer the caller's: its lease ran out and another delivery
// took the event over. The caller's processing may then be repeated by the
// other delivery; EventStores that run the EventFunc in the same database
// transaction as the completion (see the eventstore packages) roll it back
// instead.
var ErrClaimLost = errors.New("webhook: the claim on the event lapsed and another delivery took it over")

// Store records which events a receiver has processed, so that a
// webhook delivered twice (the service retries, and may deliver an event
// again after a timeout) is processed once. An event id goes through:
//
//	Claim -> ClaimAcquired -> (your EventFunc) -> Complete   (done: remembered)
//	                                           -> Release    (failed: free again)
//
// Claim must be atomic across everything that shares the store: of several
// concurrent Claims of one id, at most one gets ClaimAcquired; the others get
// ClaimInProgress until the claim is settled or its lease lapses, and
// ClaimDone after Complete. A completed id must be remembered at least as
// long as a delivery carrying it can still pass signature verification
// (twice DefaultSignatureTolerance), and in a shared store for days, because
// the service retries for a while.
//
// The handler calls Complete or Release exactly once after each
// ClaimAcquired, with a context that is not cancelled when the request is.
// Both must do nothing to, and return ErrClaimLost for, a claim whose token
// no longer owns the id.
//
// MemoryStore, the default, lives in one process. For a receiver that
// runs on several replicas, use a store on a shared database: the packages
// eventstore/pgstore (PostgreSQL, which can also commit your EventFunc's
// writes in the same transaction) and eventstore/redisstore (Redis).
type Store interface {
	// Claim tries to take ownership of the event id. An error makes the
	// handler answer 503 without processing the event, so that the service
	// delivers it again later.
	Claim(ctx context.Context, eventID string) (Claim, error)
	// Complete records that the claimed event was processed successfully.
	Complete(ctx context.Context, claim Claim) error
	// Release gives up the claim on an event that failed, so that the next
	// delivery processes it.
	Release(ctx context.Context, claim Claim) error
}

// DefaultMemoryStoreSize is how many processed event ids a
// MemoryStore keeps before it forgets the oldest ones that are past its
// replay window. At the default replay window of ten minutes it covers a
// sustained 166 events per second without growing.
const DefaultMemoryStoreSize = 100_000

// DefaultReplayWindow is how long a MemoryStore remembers a processed
// event id whatever its size bound: a delivery signed at t verifies from
// t-tolerance to t+tolerance on the receiver's clock, so an id remembered for
// twice the tolerance after processing cannot be replayed.
const DefaultReplayWindow = 2 * DefaultSignatureTolerance

// MemoryStoreOption configures a MemoryStore.
type MemoryStoreOption func(*MemoryStore)

// WithReplayWindow sets how long a processed id is remembered regardless of
// the size bound (default DefaultReplayWindow). Set it to twice your
// verifier's tolerance if you changed that. d <= 0 keeps the default.
func WithReplayWindow(d time.Duration) MemoryStoreOption {
	return func(s *MemoryStore) {
		if d > 0 {
			s.window = d
		}
	}
}

// WithStoreLogger makes the store log a warning (at most once a minute) when
// it holds more ids than its bound because all of them are inside the replay
// window.
func WithStoreLogger(l *slog.Logger) MemoryStoreOption {
	return func(s *MemoryStore) { s.logger = l }
}

// WithStoreClock makes the store read the time from now instead of
// time.Now; use it in tests.
func WithStoreClock(now func() time.Time) MemoryStoreOption {
	return func(s *MemoryStore) {
		if now != nil {
			s.now = now
		}
	}
}

// MemoryStore is an Store in memory. It remembers every processed
// id for its replay window (DefaultReplayWindow), and beyond that the most
// recent ones up to its size bound. When more ids than the bound fall inside
// the window (more than 166 events a second at the defaults), it keeps them
// all and logs a warning rather than forget one that could still be
// replayed: an id is never forgotten silently while a signed delivery of it
// can still verify.
//
// It is private to the process: it does not survive a restart and replicas
// do not share it (see Store for shared ones). A claim lasts exactly as
// long as the handler's call to your function and never lapses. The zero
// value is ready to use with the defaults; it is safe for concurrent use.
type MemoryStore struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	now      func() time.Time
	logger   *slog.Logger
	tokens   uint64
	claims   map[string]string    // in progress: id -> token
	done     map[string]time.Time // processed: id -> completion time
	order    []doneEntry          // processed ids, oldest first, from head
	head     int
	lastWarn time.Time
}

type doneEntry struct {
	id string
	at time.Time
}

// NewMemoryStore returns an in-memory store bounded to maxEntries
// processed ids past the replay window (DefaultMemoryStoreSize when
// maxEntries <= 0).
func NewMemoryStore(maxEntries int, opts ...MemoryStoreOption) *MemoryStore {
	s := &MemoryStore{max: maxEntries}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *MemoryStore) init() {
	if s.claims == nil {
		s.claims = make(map[string]string)
		s.done = make(map[string]time.Time)
	}
	if s.max <= 0 {
		s.max = DefaultMemoryStoreSize
	}
	if s.window <= 0 {
		s.window = DefaultReplayWindow
	}
	if s.now == nil {
		s.now = time.Now
	}
}

// Claim implements Store.
func (s *MemoryStore) Claim(_ context.Context, id string) (Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if _, ok := s.done[id]; ok {
		return Claim{EventID: id, Status: ClaimDone}, nil
	}
	if _, ok := s.claims[id]; ok {
		return Claim{EventID: id, Status: ClaimInProgress}, nil
	}
	s.tokens++
	tok := strconv.FormatUint(s.tokens, 10)
	s.claims[id] = tok
	return Claim{EventID: id, Status: ClaimAcquired, Token: tok}, nil
}

// Complete implements Store.
func (s *MemoryStore) Complete(ctx context.Context, c Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.claims[c.EventID] != c.Token || c.Token == "" {
		return ErrClaimLost
	}
	delete(s.claims, c.EventID)
	now := s.now()
	s.done[c.EventID] = now
	s.order = append(s.order, doneEntry{c.EventID, now})
	s.evict(ctx, now)
	return nil
}

// evict forgets the oldest processed ids while there are more than the bound
// and the oldest is past the replay window.
func (s *MemoryStore) evict(ctx context.Context, now time.Time) {
	for len(s.done) > s.max {
		oldest := s.order[s.head]
		if now.Sub(oldest.at) < s.window {
			if s.logger != nil && now.Sub(s.lastWarn) >= time.Minute {
				s.lastWarn = now
				s.logger.LogAttrs(ctx, slog.LevelWarn, "webhook: event store holds more processed ids than its bound, all inside the replay window; raise its size",
					slog.Int("ids", len(s.done)), slog.Int("bound", s.max), slog.String("replay_window", s.window.String()))
			}
			return
		}
		s.order[s.head] = doneEntry{}
		s.head++
		delete(s.done, oldest.id)
	}
	// Reclaim the queue's dead front once it is most of the slice.
	if s.head > 1024 && s.head > len(s.order)/2 {
		s.order = append([]doneEntry(nil), s.order[s.head:]...)
		s.head = 0
	}
}

// Release implements Store.
func (s *MemoryStore) Release(_ context.Context, c Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.claims[c.EventID] != c.Token || c.Token == "" {
		return ErrClaimLost
	}
	delete(s.claims, c.EventID)
	return nil
}

// Len returns how many processed event ids the store remembers.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.done)
}
