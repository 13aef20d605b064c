package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ticker prints a progress line: on a terminal one line rewritten in place
// (\r) five times a second, elsewhere (a log file, a pipe) a plain line
// every few seconds.
type ticker struct {
	out  io.Writer
	tty  bool
	line func() string
	stop chan struct{}
	wg   sync.WaitGroup
}

// isTerminal reports whether w is a terminal (a character device), without
// a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startTicker prints line() until end is called.
func startTicker(out io.Writer, line func() string) *ticker {
	t := &ticker{out: out, tty: isTerminal(out), line: line, stop: make(chan struct{})}
	every := 5 * time.Second
	if t.tty {
		every = 200 * time.Millisecond
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tk.C:
				if t.tty {
					fmt.Fprint(t.out, "\r\033[K"+t.line())
				} else {
					fmt.Fprintln(t.out, t.line())
				}
			}
		}
	}()
	return t
}

// end stops the progress line and prints it a last time.
func (t *ticker) end() {
	close(t.stop)
	t.wg.Wait()
	if t.tty {
		fmt.Fprint(t.out, "\r\033[K")
	}
	fmt.Fprintln(t.out, t.line())
}

// progress counts the rows of the paying phase by their journal event.
type progress struct {
	start                 time.Time
	total                 int
	done, failed, unknown atomic.Int64
	refused               atomic.Int64 // refused for a curable cause
	finished              atomic.Int64 // rows finished by this run
}

func newProgress(total int) *progress {
	return &progress{start: time.Now(), total: total}
}

// count adds a row's journal event; thisRun is false for rows a previous
// run finished.
func (p *progress) count(event string, thisRun bool) {
	switch event {
	case eventDone, eventOutcome:
		p.done.Add(1)
	case eventFailed:
		p.failed.Add(1)
	case eventUnknown:
		p.unknown.Add(1)
	case eventRefused:
		p.refused.Add(1)
	}
	if thisRun {
		p.finished.Add(1)
	}
}

func (p *progress) line() string {
	rate := float64(p.finished.Load()) / max(time.Since(p.start).Seconds(), 1e-3)
	return fmt.Sprintf("paying: %d rows: %d confirmed, %d refused, %d unknown (%.1f rows/s)",
		p.total, p.done.Load(), p.failed.Load()+p.refused.Load(), p.unknown.Load(), rate)
}
