package payments_test

import (
	"context"
	"runtime/metrics"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// goroutinesCreated is the number of goroutines the process has created so
// far (runtime/metrics).
func goroutinesCreated(t *testing.T) uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	require.Equal(t, metrics.KindUint64, s[0].Value.Kind(), "runtime/metrics has no %s", s[0].Name)
	return s[0].Value.Uint64()
}

// TestCallsStartNoMoreGoroutinesThanHandWritten holds every benchmarked
// operation to the goroutines the hand-written baseline (bench_baseline_test.go)
// makes per call, against the same server: one, the server's background
// read of the connection (BENCHMARKS.md, "Third round"). A goroutine per
// call more is work and a thread wake-up more; net/http starts one per
// request, for instance, when an http.Client with a Timeout has a
// RoundTripper that is not an *http.Transport, as each call's own
// http.Client has (its transport is the Call, which applies the timeout
// itself). Counted, not timed: blocks of calls from the SDK and the
// baseline alternate, and the SDK's fewest per block must not exceed the
// baseline's most (a goroutine that another test left behind can only add
// to a block).
func TestCallsStartNoMoreGoroutinesThanHandWritten(t *testing.T) {
	const blocks, calls = 5, 50
	ops := benchOps()
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			op := ops[name]
			srv := newBenchServer(t, op.status, op.body)
			ctx := context.Background()
			c := newBenchSDK(t, srv.URL)
			bl := newBaseline(srv.URL)
			t.Cleanup(bl.hc.CloseIdleConnections)
			// Warm both: the connection each opens, its goroutines.
			for range 3 {
				require.NoError(t, op.sdk(ctx, c))
				require.NoError(t, op.baseline(ctx, bl))
			}
			var sdk, base []uint64
			for range blocks {
				g0 := goroutinesCreated(t)
				for range calls {
					require.NoError(t, op.sdk(ctx, c))
				}
				g1 := goroutinesCreated(t)
				for range calls {
					require.NoError(t, op.baseline(ctx, bl))
				}
				g2 := goroutinesCreated(t)
				sdk, base = append(sdk, g1-g0), append(base, g2-g1)
			}
			require.LessOrEqual(t, slices.Min(sdk), slices.Max(base),
				"goroutines created per %d calls: SDK %v, hand-written %v", calls, sdk, base)
			// The baseline itself is what the comparison assumes: the
			// server's one goroutine per request, and no new connection.
			require.GreaterOrEqual(t, slices.Min(base), uint64(calls))
		})
	}
}
