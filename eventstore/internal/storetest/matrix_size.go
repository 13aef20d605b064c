package storetest

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// MatrixEnv picks the size of the fault matrix:
//
//	(unset)  skipped: go test of the store modules stays quick
//	ci       the size .ci/run runs on every change: every mode and every
//	         fault, 300 events a row, fixed seeds (about a minute a row)
//	1, full  2,000 events a row, the faults at full length
//	soak     20,000 events (one in 250 slow) with a replica killed every
//	         8 s for the whole run (several minutes), beside the other rows
//	         at that size
//
// MatrixSeedEnv sets the seed of the delivery order and the event ids (the
// default is fixed: 1); run one row with go test's -run, for example
// -run 'TestFaultMatrix/default/a_replica'.
const (
	MatrixEnv     = "PAYMENTS_FAULT_MATRIX"
	MatrixSeedEnv = "PAYMENTS_FAULT_MATRIX_SEED"
)

// matrixSize is the shape of a run of the matrix.
type matrixSize struct {
	name   string
	events int
	// killedFor, frozenFor and downFor are how long a killed replica
	// stays dead, the database stays frozen and stays down.
	killedFor, frozenFor, downFor time.Duration
	// slowEvery makes every slowEvery-th event slow (see Worker).
	slowEvery int
	soak      bool
}

// The sizes. The faults keep their meaning at every size: a replica is
// killed while claims are in flight (a third of the deliveries are done),
// the freeze outlasts the store timeout (2 s) so that claims time out, and
// the restart is shorter than the lease (5 s), which leases must ride out.
var (
	ciSize   = matrixSize{name: "ci", events: 300, killedFor: 3 * time.Second, frozenFor: 5 * time.Second, downFor: 4 * time.Second, slowEvery: 25}
	fullSize = matrixSize{name: "full", events: 2000, killedFor: 3 * time.Second, frozenFor: 20 * time.Second, downFor: 4 * time.Second, slowEvery: 25}
	soakSize = matrixSize{name: "soak", events: 20000, killedFor: 3 * time.Second, frozenFor: 20 * time.Second, downFor: 4 * time.Second, slowEvery: 250, soak: true}
)

// sizeFromEnv returns the size MatrixEnv asks for, or skips tb.
func sizeFromEnv(tb testing.TB) matrixSize {
	switch v := os.Getenv(MatrixEnv); v {
	case "ci":
		return ciSize
	case "1", "full":
		return fullSize
	case "soak":
		return soakSize
	case "":
		tb.Skipf("the fault matrix runs for minutes: set %s=ci (as .ci/run does), full or soak", MatrixEnv)
	default:
		tb.Fatalf("%s=%q: want ci, full (or 1) or soak", MatrixEnv, v)
	}
	return matrixSize{}
}

// seedFromEnv returns MatrixSeedEnv, 1 by default.
func seedFromEnv(tb testing.TB) uint64 {
	v := os.Getenv(MatrixSeedEnv)
	if v == "" {
		return 1
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		tb.Fatalf("%s=%q: want a number", MatrixSeedEnv, v)
	}
	return n
}
