package paymentstest

import (
	"sync"
	"time"
)

// later runs the work the test values put off (a late verification, a late
// payment) on the wall clock. Close stops what has not started and waits
// for what has, so that no goroutine outlives the server.
type later struct {
	mu     sync.Mutex
	timers map[*time.Timer]struct{}
	closed bool
	wg     sync.WaitGroup
	// hold and release count the work not yet done, so that
	// WaitForDeliveries waits for the events it will send.
	hold, release func()
}

// after runs f once d has passed, unless the server closes first.
func (l *later) after(d time.Duration, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.timers == nil {
		l.timers = make(map[*time.Timer]struct{})
	}
	l.wg.Add(1)
	l.hold()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		defer l.wg.Done()
		defer l.release()
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		delete(l.timers, t) // t is set: after held l.mu until it was
		l.mu.Unlock()
		f()
	})
	l.timers[t] = struct{}{}
}

// close drops the work not started and waits for the work running.
func (l *later) close() {
	l.mu.Lock()
	l.closed = true
	for t := range l.timers {
		if t.Stop() {
			l.release()
			l.wg.Done()
		}
	}
	l.timers = nil
	l.mu.Unlock()
	l.wg.Wait()
}

// hold counts late work that will send events: WaitForDeliveries waits for
// it.
func (d *dispatcher) hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scheduled++
	d.notify()
}

// release says that late work is done (or dropped by Close).
func (d *dispatcher) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scheduled--
	d.notify()
}
