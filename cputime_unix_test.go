//go:build unix

package payments_test

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time this process has used (user and
// system, all threads): the benchmarks report it per operation, because on a
// shared machine it varies far less than wall time.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
