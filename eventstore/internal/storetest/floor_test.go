package storetest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The plan delivers each event 2, 3 or 4 times in turn (the last one
// possibly fewer, cut at n), so that two thirds of the deliveries are
// duplicates, and its order depends on n alone.
func TestNewFloorPlan(t *testing.T) {
	const n = 9000
	p := NewFloorPlan(t, n)
	if len(p.order) != n || p.Events() != n/3 {
		t.Fatalf("%d deliveries of %d events, want %d of %d", len(p.order), p.Events(), n, n/3)
	}
	count := make([]int, p.Events())
	for _, ev := range p.order {
		count[ev]++
	}
	for ev, c := range count {
		if c != 2+ev%3 {
			t.Fatalf("event %d delivered %d times, want %d", ev, c, 2+ev%3)
		}
	}
	q := NewFloorPlan(t, n)
	for i := range p.order {
		if p.order[i] != q.order[i] {
			t.Fatalf("two plans of %d deliveries differ at %d", n, i)
		}
	}
	if short := NewFloorPlan(t, 4); short.Events() != 2 || len(short.order) != 4 {
		t.Fatalf("4 deliveries: %d events, %d deliveries; want 2 and 4", short.Events(), len(short.order))
	}
}

// Print compares each side with its mode's baseline, on the medians of the
// runs with the most deliveries.
func TestFloorTablePrint(t *testing.T) {
	var ft FloorTable
	add := func(name string, n int, m FloorMetrics) {
		if ft.runs == nil {
			ft.runs = map[string][]floorEntry{}
		}
		if _, ok := ft.runs[name]; !ok {
			ft.names = append(ft.names, name)
		}
		ft.runs[name] = append(ft.runs[name], floorEntry{n, m})
	}
	add("BenchmarkFloor/pg/ours", 1, FloorMetrics{"deliveries/s": 1})
	add("BenchmarkFloor/pg/ours", 100, FloorMetrics{"deliveries/s": 300, "hot-%": 90})
	add("BenchmarkFloor/pg/ours", 100, FloorMetrics{"deliveries/s": 500, "hot-%": 90})
	add("BenchmarkFloor/pg/baseline", 100, FloorMetrics{"deliveries/s": 200})
	var out strings.Builder
	ft.Print(&out)
	for _, want := range []string{
		"\npg: ours beside baseline (medians of 2 runs; ratio: the median of the rounds' ratios)",
		"| deliveries/s | 400 | 200 | 2.00x |",
		"| hot-% | 90.00 | - | - |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

// The queue hands out the plan's deliveries in order, then those answered
// 409, and ends once nothing is in flight or to be delivered again.
func TestFloorQueue(t *testing.T) {
	q := newFloorQueue(3)
	var got []int
	take := func() int {
		i, ok := q.take()
		if !ok {
			t.Fatalf("take after %v: the queue ended", got)
		}
		got = append(got, i)
		return i
	}
	a, b := take(), take()
	q.done(a, true) // 409: delivered again after the plan
	c := take()
	q.done(b, false)
	q.done(c, false)
	d := take()
	q.done(d, true)
	e := take()
	q.done(e, false)
	if want := []int{0, 1, 2, 0, 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	if i, ok := q.take(); ok {
		t.Fatalf("take after the last answer: %d", i)
	}
}

// With as many rounds on each side, the ratio is the median of the
// rounds' ratios, not the ratio of the medians; odd rounds run the sides
// in reverse.
func TestFloorTablePairsTheRounds(t *testing.T) {
	var ft FloorTable
	ft.runs = map[string][]floorEntry{
		"BenchmarkFloor/pg/ours":     {{100, FloorMetrics{"deliveries/s": 300}}, {100, FloorMetrics{"deliveries/s": 500}}, {100, FloorMetrics{"deliveries/s": 100}}},
		"BenchmarkFloor/pg/baseline": {{100, FloorMetrics{"deliveries/s": 200}}, {100, FloorMetrics{"deliveries/s": 400}}, {100, FloorMetrics{"deliveries/s": 100}}},
	}
	ft.names = []string{"BenchmarkFloor/pg/ours", "BenchmarkFloor/pg/baseline"}
	var out strings.Builder
	ft.Print(&out)
	// Ratios 1.5, 1.25 and 1: median 1.25 (the medians' ratio is 1.50).
	if want := "| deliveries/s | 300 | 200 | 1.25x |"; !strings.Contains(out.String(), want) {
		t.Errorf("the table lacks %q:\n%s", want, out.String())
	}
	sides := []string{"a", "b", "c"}
	if got := fmt.Sprint(FloorOrder(0, sides), FloorOrder(1, sides)); got != "[a b c] [c b a]" {
		t.Errorf("rounds 0 and 1 run %s, want [a b c] [c b a]", got)
	}
	// Ratio and Median, for BenchmarkQueue's answer over its floor: the
	// paired ratio; the ratio of the medians when the rounds do not pair.
	if r, ok := ft.Ratio("BenchmarkFloor/pg/ours", "BenchmarkFloor/pg/baseline", "deliveries/s"); !ok || r != 1.25 {
		t.Errorf("Ratio = %v, %v; want 1.25, true", r, ok)
	}
	if m, ok := ft.Median("BenchmarkFloor/pg/ours", "deliveries/s"); !ok || m != 300 {
		t.Errorf("Median = %v, %v; want 300, true", m, ok)
	}
	ft.runs["BenchmarkFloor/pg/ours"] = ft.runs["BenchmarkFloor/pg/ours"][:2] // 300, 500: median 400
	if r, ok := ft.Ratio("BenchmarkFloor/pg/ours", "BenchmarkFloor/pg/baseline", "deliveries/s"); !ok || r != 2 {
		t.Errorf("Ratio of unpaired rounds = %v, %v; want 400/200 = 2, true", r, ok)
	}
	if _, ok := ft.Ratio("BenchmarkFloor/pg/ours", "BenchmarkFloor/pg/baseline", "p99-us"); ok {
		t.Error("Ratio of a metric neither side has is ok")
	}
}

func TestStatTicks(t *testing.T) {
	// A command name with spaces and a parenthesis, as a process may have.
	line := "4242 (post gres) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 210 1864 0 0 20 0 1 0 100 0 0\n"
	if ticks, ok := statTicks(line); !ok || ticks != 210+1864 {
		t.Fatalf("statTicks = %d, %v; want %d, true", ticks, ok, 210+1864)
	}
	for _, bad := range []string{"4242 (postgres) S 1 2", "no parenthesis", "1 (p) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, ok := statTicks(bad); ok {
			t.Errorf("statTicks(%q) read a value", bad)
		}
	}
}

func TestSchedstatNanos(t *testing.T) {
	if ns, ok := schedstatNanos("20752517827 21812402633 2602414\n"); !ok || ns != 20752517827 {
		t.Fatalf("schedstatNanos = %d, %v", ns, ok)
	}
	for _, bad := range []string{"", "x 1 2", "-5 1 2"} {
		if _, ok := schedstatNanos(bad); ok {
			t.Errorf("schedstatNanos(%q) read a value", bad)
		}
	}
}

// TestProcessesCPUIsPrecise burns CPU in this process and reads it back: the
// reading grows by at least most of what getrusage saw, and (where the
// kernel keeps schedstat) is not a whole number of 10 ms ticks.
func TestProcessesCPUIsPrecise(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system: ProcessesCPU reports nothing here")
	}
	pid := os.Getpid()
	before, ok := ProcessesCPU([]int{pid})
	start, ok2 := processCPU()
	if !ok || !ok2 {
		t.Fatal("cannot read this process's CPU")
	}
	x := uint64(1)
	for {
		for range 1_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if now, _ := processCPU(); now-start >= 30*time.Millisecond {
			break
		}
	}
	after, ok := ProcessesCPU([]int{pid})
	if !ok {
		t.Fatal("cannot read this process's CPU")
	}
	if d := CPUDelta(before, after); d < 20*time.Millisecond {
		t.Errorf("ProcessesCPU saw %v of at least 30ms burned (x=%d)", d, x)
	}
	if b, err := os.ReadFile("/proc/self/schedstat"); err == nil {
		if ns, ok := schedstatNanos(string(b)); ok && ns > 0 && after[pid]%(10*time.Millisecond) == 0 {
			t.Errorf("ProcessesCPU = %v, whole ticks: schedstat was not used", after[pid])
		}
	}
}
