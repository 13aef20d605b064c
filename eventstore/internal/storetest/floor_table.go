package storetest

import (
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// floorUnits orders the metrics in the ratio table.
var floorUnits = []string{
	"events/s", "deliveries/s", "p50-us", "p99-us", "cpu-us/delivery",
	"db-cpu-us/event", "wal-bytes/event", "write-xacts/event", "round-trips/event",
	"db-cpu-us/delivery", "redis-cpu-us/delivery",
	"stmts/delivery", "round-trips/delivery", "cmds/delivery", "redis-calls/delivery", "write-xacts/delivery",
	"wal-bytes/delivery", "wal-syncs/delivery",
	"hot-%", "redeliveries/delivery",
}

// EnvFloorRounds is how many interleaved rounds BenchmarkFloor runs (each
// round runs every side once, in turn; default 1). Prefer it to -count,
// which runs each side's repetitions back to back, so that a change in the
// machine's load between them shows as a difference between the sides.
const EnvFloorRounds = "PAYMENTS_FLOOR_ROUNDS"

// FloorRounds is the number of rounds EnvFloorRounds asks for.
func FloorRounds(tb testing.TB) int {
	v := os.Getenv(EnvFloorRounds)
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive number", EnvFloorRounds, v)
	}
	return n
}

// FloorOrder is the order in which round (0, 1, ...) runs sides: as given
// in even rounds, reversed in odd ones, so that a drift of the machine's
// load within a round favours neither side.
func FloorOrder[T any](round int, sides []T) []T {
	if round%2 == 0 {
		return sides
	}
	out := make([]T, len(sides))
	for i, s := range sides {
		out[len(sides)-1-i] = s
	}
	return out
}

// FloorBaseline is the name of the hand-written receiver's sub-benchmark;
// the other sides of a mode are compared with it.
const FloorBaseline = "baseline"

// FloorTable keeps the metrics of the floor benchmarks' runs, to print the
// ratios of each side to the baseline of its mode once they all ran.
type FloorTable struct {
	mu    sync.Mutex
	runs  map[string][]floorEntry // by sub-benchmark name
	names []string                // in the order they first reported
}

type floorEntry struct {
	n int
	m FloorMetrics
}

// Report reports m with b.ReportMetric and keeps it for Print. Name the
// sub-benchmarks mode/side, with the side FloorBaseline for the baseline.
func (t *FloorTable) Report(b *testing.B, m FloorMetrics) {
	for unit, v := range m {
		b.ReportMetric(v, unit)
	}
	name := b.Name()
	if i := strings.LastIndexByte(name, '#'); i > strings.LastIndexByte(name, '/') {
		name = name[:i] // the suffix of a repeated name (rounds, -count)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string][]floorEntry{}
	}
	if _, ok := t.runs[name]; !ok {
		t.names = append(t.names, name)
	}
	t.runs[name] = append(t.runs[name], floorEntry{b.N, m})
}

// final is the runs of name with the most deliveries: the benchmark's own
// runs, not its probes with b.N = 1.
func (t *FloorTable) final(name string) []FloorMetrics {
	maxN := 0
	for _, e := range t.runs[name] {
		maxN = max(maxN, e.n)
	}
	var ms []FloorMetrics
	for _, e := range t.runs[name] {
		if e.n == maxN {
			ms = append(ms, e.m)
		}
	}
	return ms
}

// pairedRatio is the median, over the rounds, of side's unit divided by
// base's in the same round (the i-th final runs of each): a change of the
// machine's load between rounds cancels out. It is false unless both have
// the same number of runs with the unit.
func (t *FloorTable) pairedRatio(side, base, unit string) (float64, bool) {
	a, b := t.final(side), t.final(base)
	if len(a) != len(b) || len(a) == 0 {
		return 0, false
	}
	var rs []float64
	for i := range a {
		x, ok1 := a[i][unit]
		y, ok2 := b[i][unit]
		if !ok1 || !ok2 || y == 0 {
			return 0, false
		}
		rs = append(rs, x/y)
	}
	return medianOf(rs), true
}

// Ratio is the median, over the rounds, of side's unit divided by base's
// in the same round (sides named mode/side, as in Report), or the ratio
// of their medians when the rounds do not pair up; false when either has
// no such metric.
func (t *FloorTable) Ratio(side, base, unit string) (float64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.pairedRatio(side, base, unit); ok {
		return r, true
	}
	a, ok1 := t.median(side, unit)
	b, ok2 := t.median(base, unit)
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return a / b, true
}

// Median is the median of unit over the final runs of name (mode/side).
func (t *FloorTable) Median(name, unit string) (float64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.median(name, unit)
}

func medianOf(vs []float64) float64 {
	sort.Float64s(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// median of unit over the final runs of name.
func (t *FloorTable) median(name, unit string) (float64, bool) {
	var vs []float64
	for _, m := range t.final(name) {
		if v, ok := m[unit]; ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return medianOf(vs), true
}

// Print writes, for each mode, a Markdown table of each side's median
// metrics beside the baseline's, and their ratio: the median of the
// rounds' ratios (pairedRatio).
func (t *FloorTable) Print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, base := range t.names {
		if path.Base(base) != FloorBaseline {
			continue
		}
		mode := path.Dir(base)
		for _, side := range t.names {
			if path.Dir(side) != mode || side == base {
				continue
			}
			fmt.Fprintf(w, "\n%s: %s beside %s (medians of %d runs; ratio: the median of the rounds' ratios)\n\n", path.Base(mode), path.Base(side), FloorBaseline, len(t.final(side)))
			fmt.Fprintf(w, "| metric | %s | %s | ratio |\n|---|---:|---:|---:|\n", path.Base(side), FloorBaseline)
			for _, unit := range floorUnits {
				ours, ok1 := t.median(side, unit)
				theirs, ok2 := t.median(base, unit)
				if !ok1 && !ok2 {
					continue
				}
				ratio := "-"
				if r, ok := t.pairedRatio(side, base, unit); ok {
					ratio = fmt.Sprintf("%.2fx", r)
				} else if ok1 && ok2 && theirs != 0 {
					ratio = fmt.Sprintf("%.2fx", ours/theirs)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s |\n", unit, show(ours, ok1), show(theirs, ok2), ratio)
			}
		}
	}
}

// PrintIfVerbose prints the table to stdout under go test -v.
func (t *FloorTable) PrintIfVerbose() {
	if testing.Verbose() {
		t.Print(os.Stdout)
	}
}

func show(v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// ProcessesCPU is the CPU time (user and system) the local processes pids
// have used, from /proc: a server's processes when the server runs on this
// machine. It is false when any of them cannot be read (not Linux, or not
// local).
//
// It reads the scheduler's own count, in nanoseconds (the schedstat of each
// of the process's threads), where the kernel keeps one: /proc/<pid>/stat gives whole clock ticks (10
// ms) per process, and a reading that truncates each of a server's fifty
// processes to its tick was off by up to half a second in a run that used
// 1.5 s, by more or less from one run to the next.
func ProcessesCPU(pids []int) (map[int]time.Duration, bool) {
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		d, ok := processCPUOf(pid)
		if !ok {
			return nil, false
		}
		out[pid] = d
	}
	return out, true
}

// processCPUOf reads one process's CPU time: the sum of its threads'
// schedstat nanoseconds when the kernel keeps them (one without them writes
// 0 there), else stat's ticks. stat also counts threads that have ended,
// which schedstat cannot: a sum more than a tick short of stat's is not
// used.
func processCPUOf(pid int) (time.Duration, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, false
	}
	ticks, ok := statTicks(string(b))
	if !ok {
		return 0, false
	}
	coarse := time.Duration(ticks) * 10 * time.Millisecond
	if fine, ok := threadsCPU(dir); ok && (fine > 0 || ticks == 0) && fine+10*time.Millisecond >= coarse {
		return fine, true
	}
	return coarse, true
}

// threadsCPU sums the schedstat run time of the threads of the process
// whose /proc directory is dir.
func threadsCPU(dir string) (time.Duration, bool) {
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil {
		return 0, false
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/task/" + task.Name() + "/schedstat")
		if err != nil {
			return 0, false
		}
		ns, ok := schedstatNanos(string(b))
		if !ok {
			return 0, false
		}
		sum += time.Duration(ns)
	}
	return sum, true
}

// statTicks reads utime + stime from the text of /proc/<pid>/stat. The
// command name, in parentheses, may hold spaces: the fields that follow it
// start with the state (field 3); utime and stime are fields 14 and 15, in
// clock ticks (100 a second on Linux).
func statTicks(s string) (int64, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ut + st, true
}

// schedstatNanos reads the first field of /proc/<pid>/schedstat: the time
// the process ran on a CPU, in nanoseconds.
func schedstatNanos(s string) (int64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return ns, err == nil && ns >= 0
}

// CPUDelta is the CPU the processes used between two ProcessesCPU readings:
// a process present only in the second counts in full, one gone by then not
// at all.
func CPUDelta(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, a := range after {
		d += a - before[pid]
	}
	return d
}
