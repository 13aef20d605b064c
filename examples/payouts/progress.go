package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress counts the rows by outcome and prints a progress line: on a
// terminal one line rewritten in place (\r) five times a second, elsewhere
// (a log file, a pipe) a plain line every few seconds.
type progress struct {
	out                   io.Writer
	tty                   bool
	start                 time.Time
	total                 int
	done, failed, unknown atomic.Int64
	refused               atomic.Int64 // refused for a curable cause
	finished              atomic.Int64 // rows finished by this run
	stop                  chan struct{}
	wg                    sync.WaitGroup
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

func newProgress(out io.Writer, total int) *progress {
	return &progress{out: out, tty: isTerminal(out), start: time.Now(), total: total, stop: make(chan struct{})}
}

// count adds a row's outcome; thisRun is false for rows a previous run
// finished.
func (p *progress) count(event string, thisRun bool) {
	switch event {
	case eventDone:
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
	return fmt.Sprintf("%d rows: %d done, %d failed, %d unknown, %d refused (%.1f rows/s)",
		p.total, p.done.Load(), p.failed.Load(), p.unknown.Load(), p.refused.Load(), rate)
}

// run prints the progress line until end is called.
func (p *progress) run() {
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if p.tty {
					fmt.Fprint(p.out, "\r\033[K"+p.line())
				} else {
					fmt.Fprintln(p.out, p.line())
				}
			}
		}
	}()
}

// end stops the progress line and prints the summary.
func (p *progress) end() {
	close(p.stop)
	p.wg.Wait()
	if p.tty {
		fmt.Fprint(p.out, "\r\033[K")
	}
	fmt.Fprintln(p.out, "payouts: "+p.line())
}
