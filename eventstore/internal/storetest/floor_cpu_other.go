//go:build !unix

package storetest

import "time"

// processCPU is not measured here: the CPU metric is left out.
func processCPU() (time.Duration, bool) { return 0, false }
