package paymentstest

import (
	"sync"
	"time"
)

// clock is the server's time: a base clock plus the offset that Advance
// accumulates. Times are UTC and cut to milliseconds, the precision of the
// timestamps the server sends.
type clock struct {
	base func() time.Time

	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.base().Add(off).UTC().Truncate(time.Millisecond)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// Now returns the server's current time, its business clock: the clock
// (the wall clock) moved by every Advance so far.
// Quote expiry, timestamps in responses and events (created_at), idempotency
// retention and the times in the server's logs all use it. Webhook
// signatures do not: their t is the wall-clock time of sending.
func (s *Server) Now() time.Time { return s.clock.now() }

// Advance moves the server's clock forward by d (backward when d is
// negative). Use it to expire quotes: after Advance(5*time.Minute) every
// quote issued before is refused by confirm with code "quote_expired".
//
// Webhook deliveries are still signed with the wall clock (time.Now), as
// the real service signs them at the moment of sending, so a receiver
// verifying on real time accepts them however far the server's clock has
// moved; only their created_at shows the server's time.
func (s *Server) Advance(d time.Duration) { s.clock.advance(d) }

// stamp formats a time as the server sends it: RFC 3339, UTC, milliseconds.
func stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
