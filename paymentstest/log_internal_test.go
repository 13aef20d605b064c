package paymentstest

import (
	"slices"
	"testing"
)

func TestRing(t *testing.T) {
	r := newRing[int](4)
	contents := func() []int {
		var out []int
		r.each(func(i, v int) {
			if i != len(out) {
				t.Fatalf("each gave index %d at position %d", i, len(out))
			}
			out = append(out, v)
		})
		return out
	}
	if got := contents(); len(got) != 0 {
		t.Fatalf("empty ring holds %v", got)
	}
	for v := 1; v <= 3; v++ {
		r.add(v)
	}
	if got := contents(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("below the limit: %v", got)
	}
	for v := 4; v <= 10; v++ {
		r.add(v)
		want := []int{}
		for w := max(1, v-3); w <= v; w++ {
			want = append(want, w)
		}
		if got := contents(); !slices.Equal(got, want) {
			t.Fatalf("after adding %d: %v, want %v", v, got, want)
		}
	}
	if r.len() != 4 {
		t.Fatalf("len %d", r.len())
	}
}

// TestRingAppendPastLimitIsCheap: once full, adding overwrites in place:
// no allocation and no copy of the buffer, however large.
func TestRingAppendPastLimitIsCheap(t *testing.T) {
	const limit = 100_000
	r := newRing[RequestRecord](limit)
	for range limit {
		r.add(RequestRecord{Method: "POST"})
	}
	buf := &r.buf[0]
	allocs := testing.AllocsPerRun(1000, func() { r.add(RequestRecord{Method: "PUT"}) })
	if allocs != 0 {
		t.Fatalf("adding to a full ring allocates %v times", allocs)
	}
	if &r.buf[0] != buf || len(r.buf) != limit {
		t.Fatal("adding to a full ring replaced its buffer")
	}
}
