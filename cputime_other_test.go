//go:build !unix

package payments_test

import "time"

// processCPUTime is not measured on this platform: the benchmarks then report
// wall time only.
func processCPUTime() (time.Duration, bool) { return 0, false }
