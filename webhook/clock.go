package webhook

import (
	"context"
	"time"
)

// clock is the time the lease logic of a handler runs on: the claim's
// start, the heartbeat's renewals and its cut-off. Tests replace it (see
// export_test.go) so that no lease test depends on the machine's speed;
// the handler's only clock otherwise is the real one.
type clock interface {
	now() time.Time
	// afterFunc calls f in its own goroutine after d; stop reports
	// whether it stopped f from being called.
	afterFunc(d time.Duration, f func()) (stop func() bool)
	// timer returns a channel that receives after d, and its stop.
	timer(d time.Duration) (<-chan time.Time, func() bool)
	// withDeadline bounds ctx at t on this clock.
	withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc)
}

type realClock struct{}

func (realClock) now() time.Time { return time.Now() }

func (realClock) afterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

func (realClock) timer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func (realClock) withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, t)
}
