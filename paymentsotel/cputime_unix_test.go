//go:build unix

package paymentsotel_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system, every thread) the process has
// used so far. Wall time on a shared machine swings with its neighbours;
// this much less.
func cpuTime() (time.Duration, bool) {
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) != nil {
		return 0, false
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()), true
}
