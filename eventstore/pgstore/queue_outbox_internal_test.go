package pgstore

import (
	"testing"
	"time"
)

// A mover waits while the table received an event less than moveQuiet ago
// and the oldest waiting has waited less than moveGather, and never longer
// than what is left of either; an event dated ahead of the server's clock
// (negative ages) makes it look again within moveGather.
func TestGatherFor(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		newest, oldest, want time.Duration
	}{
		{0, 0, moveQuiet},                         // a burst begins
		{5 * ms, 100 * ms, moveQuiet - 5*ms},      // still receiving: until the quiet
		{5 * ms, moveGather - 10*ms, 10 * ms},     // until the oldest's bound
		{moveQuiet, 100 * ms, 0},                  // quiet: move
		{moveQuiet + ms, moveQuiet + ms, 0},       // one event, quiet
		{1 * ms, moveGather, 0},                   // the oldest waited its bound
		{1 * ms, time.Hour, 0},                    // long waiting
		{-time.Hour, -time.Hour, moveGather},      // dated ahead: look again
		{-time.Hour, moveGather - 50*ms, 50 * ms}, // dated ahead, the oldest not
	} {
		if got := gatherFor(c.newest, c.oldest); got != c.want {
			t.Errorf("gatherFor(newest %v, oldest %v) = %v, want %v", c.newest, c.oldest, got, c.want)
		}
	}
}
