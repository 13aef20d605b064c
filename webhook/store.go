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

// Claim is a ClaimStore's answer to a claim on an event id.
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
	// delivery may take the event over (its owner may have died), on the
	// caller's clock: the store reads it before it sends the claim, so it
	// comes before the database's own end of the lease. The handler renews
	// the lease while your EventFunc runs (ClaimStore.Renew), and cancels the
	// function's context when a renewal finds the claim lost, or, when no
	// renewal succeeded, a safety margin before LeaseExpires (see
	// EventFunc). The zero time means the claim never lapses: the handler
	// then neither renews it nor bounds the function.
	LeaseExpires time.Time
}

// ErrClaimLost is returned by a ClaimStore's Renew, Complete or Release when the
// claim is no longer the caller's: its lease ran out and another delivery
// took the event over (or completed it). The caller's processing may then be
// repeated by the other delivery; stores that run the EventFunc in the same
// database transaction as the completion (see the eventstore packages) roll
// it back instead.
var ErrClaimLost = errors.New("webhook: the claim on the event lapsed and another delivery took it over")

// ClaimStore records which events a receiver has processed, so that a
// webhook delivered twice (the service retries, and may deliver an event
// again after a timeout) is processed once. An event id goes through:
//
//	Claim -> ClaimAcquired -> (your EventFunc; Renew every lease/3) -> Complete   (done: remembered)
//	                                                               -> Release    (failed: free again)
//
// Claim must be atomic across everything that shares the store: of several
// concurrent Claims of one id, at most one gets ClaimAcquired; the others get
// ClaimInProgress until the claim is settled or its lease lapses, and
// ClaimDone after Complete. A completed id must be remembered at least as
// long as a delivery carrying it can still pass signature verification
// (twice DefaultSignatureTolerance), and in a shared store for days, because
// the service retries for a while.
//
// Each method must return by the context's deadline: the handler gives
// every call one (DefaultClaimStoreTimeout), so that a database that hangs costs a
// 503, never a hung handler. The rules, for a claim c on an id:
//
//   - Renew extends c's lease by the store's lease, from now, while c's
//     token holds the id unsettled (even past its lease, when nobody took
//     it over), and returns c with the new LeaseExpires. It returns c
//     unchanged and no error when c's token already completed the id, and
//     ErrClaimLost otherwise.
//   - Complete records the id as processed, for the retention, unless
//     another claim holds the id (within its lease) or completed it: then
//     ErrClaimLost. So a late Complete of a lapsed claim that nobody took
//     over succeeds, and a Complete by a token that completed already is a
//     success that changes nothing. The handler calls Complete only after
//     your function succeeded, and calls it again, in the background, until
//     it lands (see Handler.Shutdown).
//   - Release frees the id while c's token holds it unsettled, and returns
//     ErrClaimLost otherwise (the id is settled, or another claim holds it,
//     or, in stores that forget lapsed claims, nothing holds it).
//
// A claim with an empty token owns nothing: every method returns
// ErrClaimLost for it.
//
// MemoryClaimStore, the default, lives in one process. For a receiver that
// runs on several replicas, use a store on a shared database: the packages
// eventstore/pgstore (PostgreSQL, which can also commit your EventFunc's
// writes in the same transaction) and eventstore/redisstore (Redis).
type ClaimStore interface {
	// Claim tries to take ownership of the event id. An error makes the
	// handler answer 503 without processing the event, so that the service
	// delivers it again later.
	Claim(ctx context.Context, eventID string) (Claim, error)
	// Renew extends the lease of a claim whose event is being processed.
	Renew(ctx context.Context, claim Claim) (Claim, error)
	// Complete records that the claimed event was processed successfully.
	Complete(ctx context.Context, claim Claim) error
	// Release gives up the claim on an event that failed, so that the next
	// delivery processes it.
	Release(ctx context.Context, claim Claim) error
}

// DefaultMemoryClaimStoreSize is how many processed event ids a
// MemoryClaimStore keeps before it forgets the oldest ones that are past its
// replay window. At the default replay window of ten minutes it covers a
// sustained 166 events per second without growing.
const DefaultMemoryClaimStoreSize = 100_000

// DefaultReplayWindow is how long a MemoryClaimStore remembers a processed
// event id whatever its size bound: a delivery signed at t verifies from
// t-tolerance to t+tolerance on the receiver's clock, so an id remembered for
// twice the tolerance after processing cannot be replayed.
const DefaultReplayWindow = 2 * DefaultSignatureTolerance

// memoryOption configures a MemoryClaimStore: the package's tests set its
// clock, lease and logger (export_test.go); a merchant needs none.
type memoryOption func(*MemoryClaimStore)

// MemoryClaimStore is a ClaimStore in memory. It remembers every processed
// id for its replay window (DefaultReplayWindow; behind a Handler whose
// verifier is a SignatureVerifier or a StandardVerifier with a longer
// tolerance, twice that tolerance: TestMemoryStoreWindowFollowsTolerance), and beyond that the most
// recent ones up to its size bound. When more ids than the bound fall inside
// the window (more than 166 events a second at the defaults), it keeps them
// all and logs a warning rather than forget one that could still be
// replayed: an id is never forgotten silently while a signed delivery of it
// can still verify.
//
// It is private to the process: it does not survive a restart and replicas
// do not share it (see ClaimStore for shared ones). Its claims have a lease
// (DefaultLease) like those of the shared stores: the
// handler renews it while your function runs, so in one process a claim
// lapses only if its handler stops renewing it, and a lapsed claim is taken
// over by the next delivery. The zero value is ready to use with the
// defaults; it is safe for concurrent use.
type MemoryClaimStore struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	lease    time.Duration
	now      func() time.Time // the wall clock: the replay window
	clock    bool             // now was set by the package's tests: leases run on it too
	epoch    time.Time        // the leases' origin: a monotonic reading, or now's first
	logger   *slog.Logger     // the handler's (NewHandler sets it), or none
	tokens   uint64
	claims   map[string]memClaim      // unsettled: id -> claim
	waiting  map[string]chan struct{} // ids deliveries wait on: closed when the claim settles
	done     map[string]uint64        // processed: id -> the token that completed it
	order    []doneEntry              // processed ids, oldest first, from head
	head     int
	lastWarn time.Time
}

// memClaim is an unsettled claim: its token (a counter) and the end of its
// lease, as a time since the store's epoch (s.elapsed).
type memClaim struct {
	token   uint64
	expires time.Duration
}

type doneEntry struct {
	id string
	at time.Time
}

// NewMemoryClaimStore returns an in-memory store bounded to maxEntries
// processed ids past the replay window (DefaultMemoryClaimStoreSize when
// maxEntries <= 0).
func NewMemoryClaimStore(maxEntries int) *MemoryClaimStore {
	return newMemoryClaimStore(maxEntries)
}

func newMemoryClaimStore(maxEntries int, opts ...memoryOption) *MemoryClaimStore {
	s := &MemoryClaimStore{max: maxEntries}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *MemoryClaimStore) init() {
	if s.claims == nil {
		s.claims = make(map[string]memClaim)
		s.done = make(map[string]uint64)
		s.waiting = make(map[string]chan struct{})
	}
	if s.max <= 0 {
		s.max = DefaultMemoryClaimStoreSize
	}
	if s.window <= 0 {
		s.window = DefaultReplayWindow
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.epoch.IsZero() {
		s.epoch = time.Now() // with a monotonic reading
		if s.clock {
			s.epoch = s.now()
		}
	}
}

// elapsed is the leases' clock: the time since the store's epoch, on the
// monotonic clock (on the tests' clock when set), so that a step of the
// wall clock moves no lease.
func (s *MemoryClaimStore) elapsed() time.Duration {
	if s.clock {
		return s.now().Sub(s.epoch)
	}
	return time.Since(s.epoch)
}

// wall is the time a Claim's LeaseExpires counts from: WithMemoryClock's
// when set, so that a handler on the same fake clock sees the lease it
// times its renewals by.
func (s *MemoryClaimStore) wall() time.Time {
	if s.clock {
		return s.now()
	}
	return time.Now()
}

// live returns the unsettled claim on id that is within its lease.
func (s *MemoryClaimStore) live(id string) (memClaim, bool) {
	c, ok := s.claims[id]
	return c, ok && s.elapsed() < c.expires
}

// token is a Claim's token as the store counts them; 0 for none.
func token(c Claim) uint64 {
	t, err := strconv.ParseUint(c.Token, 10, 64)
	if err != nil {
		return 0
	}
	return t
}

// Claim implements ClaimStore.
func (s *MemoryClaimStore) Claim(_ context.Context, id string) (Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if _, ok := s.done[id]; ok {
		return Claim{EventID: id, Status: ClaimDone}, nil
	}
	if _, ok := s.live(id); ok {
		return Claim{EventID: id, Status: ClaimInProgress}, nil
	}
	s.tokens++
	start := s.wall() // the handler's clock, read first: LeaseExpires comes first
	s.wake(id)        // waiters on a lapsed claim taken over: they wait for this one
	s.claims[id] = memClaim{token: s.tokens, expires: s.elapsed() + s.lease}
	return Claim{EventID: id, Status: ClaimAcquired, Token: strconv.FormatUint(s.tokens, 10), LeaseExpires: start.Add(s.lease)}, nil
}

// Renew implements ClaimStore.
func (s *MemoryClaimStore) Renew(_ context.Context, c Claim) (Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	tok := token(c)
	if tok == 0 {
		return c, ErrClaimLost
	}
	if d, ok := s.done[c.EventID]; ok && d == tok {
		return c, nil
	}
	if cl, ok := s.claims[c.EventID]; !ok || cl.token != tok {
		return c, ErrClaimLost
	}
	start := s.wall()
	s.claims[c.EventID] = memClaim{token: tok, expires: s.elapsed() + s.lease}
	c.LeaseExpires = start.Add(s.lease)
	return c, nil
}

// Complete implements ClaimStore.
func (s *MemoryClaimStore) Complete(ctx context.Context, c Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	tok := token(c)
	if tok == 0 {
		return ErrClaimLost
	}
	if d, ok := s.done[c.EventID]; ok {
		if d == tok {
			return nil
		}
		return ErrClaimLost
	}
	now := s.now()
	if other, ok := s.live(c.EventID); ok && other.token != tok {
		return ErrClaimLost
	}
	delete(s.claims, c.EventID)
	s.wake(c.EventID)
	s.done[c.EventID] = tok
	s.order = append(s.order, doneEntry{c.EventID, now})
	s.evict(ctx, now)
	return nil
}

// evict forgets the oldest processed ids while there are more than the bound
// and the oldest is past the replay window.
func (s *MemoryClaimStore) evict(ctx context.Context, now time.Time) {
	for len(s.done) > s.max {
		oldest := s.order[s.head]
		if now.Sub(oldest.at) < s.window {
			if s.logger != nil && now.Sub(s.lastWarn) >= time.Minute {
				s.lastWarn = now
				s.logger.LogAttrs(ctx, slog.LevelWarn, "webhook: claim store holds more processed ids than its bound, all inside the replay window; raise its size",
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

// Release implements ClaimStore.
func (s *MemoryClaimStore) Release(_ context.Context, c Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if cl, ok := s.claims[c.EventID]; !ok || cl.token != token(c) {
		return ErrClaimLost
	}
	delete(s.claims, c.EventID)
	s.wake(c.EventID)
	return nil
}

// settled returns a channel that is closed once the claim on id is
// completed, released or taken over, and how long until its lease lapses;
// a closed channel when no claim on id is live. A delivery of this process
// that waits for another one of the same event waits on it
// (Handler.awaitMemoryClaim).
func (s *MemoryClaimStore) settled(id string) (<-chan struct{}, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c, ok := s.live(id)
	if !ok {
		return closedChan, 0
	}
	ch, ok := s.waiting[id]
	if !ok {
		ch = make(chan struct{})
		s.waiting[id] = ch
	}
	return ch, c.expires - s.elapsed()
}

// closedChan is a channel that is always closed.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// wake ends the wait of the deliveries waiting on id's claim. s.mu is held.
func (s *MemoryClaimStore) wake(id string) {
	if ch, ok := s.waiting[id]; ok {
		close(ch)
		delete(s.waiting, id)
	}
}

// logTo makes the store log its warnings (more ids than its bound, all
// inside the replay window; at most once a minute) to l, unless it has a
// logger already: the first handler's WithLogger serves the store.
// coverReplays makes the store remember processed ids for at least window
// (never less than DefaultReplayWindow): NewHandler gives it twice its
// verifier's tolerance, so that no delivery that still verifies is replayed.
func (s *MemoryClaimStore) coverReplays(window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window <= 0 {
		s.window = DefaultReplayWindow
	}
	if window > s.window {
		s.window = window
	}
}

func (s *MemoryClaimStore) logTo(l *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logger == nil {
		s.logger = l
	}
}

// Len returns how many processed event ids the store remembers.
func (s *MemoryClaimStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.done)
}
