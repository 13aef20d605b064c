package webhook

// This file is an internal test: leaseMargin is unexported, and
// lease_test.go is an external test (package webhook_test).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// leaseMargin is a fifth of the lease, raised to 100 ms, and cut to half the
// lease, the cut winning where the two clamps cross (below 200 ms).
func TestLeaseMargin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
		want  time.Duration
	}{
		{"default lease: a fifth", DefaultLease, time.Second},
		{"long lease: a fifth", 15 * time.Second, 3 * time.Second},
		{"1 s: a fifth", time.Second, 200 * time.Millisecond},
		{"1.2 s: a fifth", 1200 * time.Millisecond, 240 * time.Millisecond},
		{"just above 500 ms: a fifth", 501 * time.Millisecond, 100200 * time.Microsecond},
		{"500 ms: a fifth, equal to the floor", 500 * time.Millisecond, 100 * time.Millisecond},
		{"just below 500 ms: the floor", 499 * time.Millisecond, 100 * time.Millisecond},
		{"400 ms: the floor (a fifth is 80 ms, half is 200 ms)", 400 * time.Millisecond, 100 * time.Millisecond},
		{"just above 200 ms: the floor", 201 * time.Millisecond, 100 * time.Millisecond},
		{"200 ms: the floor, equal to the half", 200 * time.Millisecond, 100 * time.Millisecond},
		{"just below 200 ms: the half", 199 * time.Millisecond, 99500 * time.Microsecond},
		{"150 ms: the half", 150 * time.Millisecond, 75 * time.Millisecond},
		{"100 ms: the half", 100 * time.Millisecond, 50 * time.Millisecond},
		{"1 ms: the half", time.Millisecond, 500 * time.Microsecond},
		{"3 ns: the half, rounded down", 3 * time.Nanosecond, time.Nanosecond},
		{"1 ns: the half, rounded down to none", time.Nanosecond, 0},
		{"no lease: no margin", 0, 0},
	} {
		assert.Equal(t, tc.want, leaseMargin(tc.lease), "%s (lease %s)", tc.name, tc.lease)
	}
}
