package pgstore

import (
	"testing"
	"time"
)

// The Queue's notifications after its commits start notifyGap apart, the
// gap counted from the start of the previous one, not its end: a round
// trip of 30 ms leaves a pause of 20 ms, one longer than the gap none, so
// that a loaded server does not push a waiter's wake-up past the gap and
// two round trips. Commits while a notification is on its way share the
// next one. A fake clock: the notifier's sends and pauses are the test's.
func TestNotifyGapCountsFromTheSendsStart(t *testing.T) {
	s := &OutcomeStore{}
	clock := time.Unix(0, 0) // touched by the notifier's goroutine alone
	sends := make(chan time.Duration)
	took := make(chan time.Duration)
	slept := make(chan time.Duration)
	s.after.now = func() time.Time { return clock }
	s.after.send = func() {
		sends <- clock.Sub(time.Unix(0, 0))
		clock = clock.Add(<-took)
	}
	s.after.sleep = func(d time.Duration) {
		slept <- d
		clock = clock.Add(max(d, 0))
	}
	expect := func(ch chan time.Duration, what string, want time.Duration) {
		t.Helper()
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		case <-time.After(time.Minute): // a bound for a loaded machine, not a measurement
			t.Fatalf("%s: none within a minute", what)
		}
	}
	idle := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			s.after.mu.Lock()
			running := s.after.running
			s.after.mu.Unlock()
			if !running {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the notifier still runs a minute after its last pause")
			}
		}
	}

	s.notifyCommitted()
	expect(sends, "the first commit's notification starts at", 0)
	s.notifyCommitted() // two commits while it is on its way
	s.notifyCommitted()
	took <- 30 * time.Millisecond
	expect(slept, "after a 30 ms notification, the pause", notifyGap-30*time.Millisecond)
	expect(sends, "the two commits' one notification starts at", notifyGap)
	took <- 80 * time.Millisecond
	expect(slept, "after an 80 ms notification, the pause (none)", notifyGap-80*time.Millisecond)
	idle() // nothing pending: the notifier ends
	s.notifyCommitted()
	expect(sends, "a later commit's notification starts at once, at", notifyGap+80*time.Millisecond)
	took <- time.Millisecond
	expect(slept, "after a 1 ms notification, the pause", notifyGap-time.Millisecond)
	idle()
}
