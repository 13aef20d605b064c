package webhook

import (
	"github.com/paymentsapi/payments-go/internal/testhook"

	"context"
	"log/slog"
	"sync"
	"time"
)

// SetMaxPendingCompletions lowers the cap of background completions of h
// (maxPendingCompletions), so that a test reaches it with a few events.
func SetMaxPendingCompletions(h *Handler, n int) { h.bg.limit = int64(n) }

// FakeClock is a clock that moves only when Advance is called, for the
// lease tests: no renewal is late however slow the machine.
type FakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at   time.Time
	fire func()
	done bool
}

// NewFakeClock returns a fake clock at t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{t: t} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the time by d and fires the timers due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.t) {
			t.done = true
			due = append(due, t.fire)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// Pending returns how many timers wait.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

func (c *FakeClock) add(d time.Duration, fire func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.t.Add(d), fire: fire}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

func (c *FakeClock) now() time.Time { return c.Now() }

func (c *FakeClock) afterFunc(d time.Duration, f func()) func() bool {
	return c.add(d, func() { go f() })
}

func (c *FakeClock) timer(d time.Duration) (<-chan time.Time, func() bool) {
	ch := make(chan time.Time, 1)
	stop := c.add(d, func() { ch <- c.Now() })
	return ch, stop
}

// withDeadline sets no deadline: the fake time ends nothing by itself.
func (c *FakeClock) withDeadline(ctx context.Context, _ time.Time) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// SetClock makes h time its leases by c.
func SetClock(h *Handler, c *FakeClock) { h.clock = c }

// Test hooks: settings the package's own tests need and a merchant does not,
// so they are not part of the API (issue 35: no exported test seam).

// WithSignatureClock makes a verifier read the current time from now.
func WithSignatureClock(now func() time.Time) VerifierOption {
	return VerifierOption{func(v *verifierConfig) error {
		v.now = now
		return nil
	}}
}

// WithMemoryClock makes a MemoryClaimStore read the time from now: the replay
// window and the leases inside the store run on it; the LeaseExpires it
// returns stays on the real clock, which the handler's timers run on.
func WithMemoryClock(now func() time.Time) memoryOption {
	return func(s *MemoryClaimStore) {
		if now != nil {
			s.now, s.clock = now, true
		}
	}
}

// WithMemoryLease sets how long a MemoryClaimStore's claim lasts unless renewed.
func WithMemoryLease(d time.Duration) memoryOption {
	return func(s *MemoryClaimStore) {
		if d > 0 {
			s.lease = d
		}
	}
}

// WithMemoryLogger gives a MemoryClaimStore its logger before any handler does.
func WithMemoryLogger(l *slog.Logger) memoryOption {
	return func(s *MemoryClaimStore) { s.logger = l }
}

// NewMemoryClaimStoreWith is NewMemoryClaimStore with the hooks above.
func NewMemoryClaimStoreWith(maxEntries int, opts ...memoryOption) *MemoryClaimStore {
	return newMemoryClaimStore(maxEntries, opts...)
}

// WithRecentlyDone makes a handler remember n processed events (default
// DefaultRecentlyDone; 0: none): internal/testhook.HandlerRecentlyDone.
func WithRecentlyDone(n int) HandlerOption {
	return testhook.HandlerRecentlyDone(n).(HandlerOption)
}

// WithClaimStoreTimeout sets the deadline of each store call (default
// DefaultClaimStoreTimeout): internal/testhook.HandlerClaimStoreTimeout.
func WithClaimStoreTimeout(d time.Duration) HandlerOption {
	return testhook.HandlerClaimStoreTimeout(d).(HandlerOption)
}

// ReplayWindow is how long s remembers a processed id.
func ReplayWindow(s *MemoryClaimStore) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window
}
