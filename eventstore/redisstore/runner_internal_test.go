package redisstore

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// On a client that keeps deadlines itself, a call runs on the caller's
// goroutine; on one that does not, on a runner's, and the caller gets the
// deadline's error at the deadline even while the call ignores it.
func TestBounderCallsDirectOrThroughTheRunner(t *testing.T) {
	onCaller := func(context.Context) (any, error) { // false on a runner's goroutine
		buf := make([]byte, 64<<10)
		return !strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*runner).work"), nil
	}
	direct := &bounder{timeout: time.Second, direct: true, runner: runner{idle: make(chan *command)}}
	if v, err := direct.call(context.Background(), onCaller); err != nil || v != true {
		t.Errorf("direct: the call ran on the caller's goroutine: %v, %v; want true", v, err)
	}
	viaRunner := &bounder{timeout: 50 * time.Millisecond, runner: runner{idle: make(chan *command)}}
	if v, err := viaRunner.call(context.Background(), onCaller); err != nil || v != false {
		t.Errorf("runner: the call ran on the caller's goroutine: %v, %v; want false", v, err)
	}
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_, err := viaRunner.call(context.Background(), func(context.Context) (any, error) {
		<-release // a client that waits out its own read timeout
		return nil, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("runner: a call past the deadline: %v, want DeadlineExceeded", err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("runner: returned after %v, before the deadline", took)
	}
	// A shorter deadline of the caller's wins.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := direct.call(ctx, func(ctx context.Context) (any, error) {
		d, _ := ctx.Deadline()
		if time.Until(d) > 10*time.Millisecond {
			return nil, errors.New("the store's deadline replaced the caller's shorter one")
		}
		return nil, nil
	}); err != nil {
		t.Error(err)
	}
}

// A runner's goroutine takes the commands handed to it while it is idle,
// and ends once it has been idle for its linger (runnerIdle, 30 s, in the
// stores): a store on a client without ContextTimeoutEnabled keeps no
// goroutine once it is idle.
func TestRunnerGoroutineEndsWhenIdle(t *testing.T) {
	ended := make(chan struct{}, 4)
	r := &runner{idle: make(chan *command), linger: 500 * time.Millisecond, ended: func() { ended <- struct{}{} }}
	run := func() {
		j := &command{ctx: context.Background(), call: func(context.Context) (any, error) { return nil, nil }, done: make(chan struct{})}
		r.start(j)
		<-j.done
	}
	run()
	// While it lingers, the next command goes to the same goroutine: the
	// send to idle succeeds only when one waits there.
	deadline := time.Now().Add(5 * time.Second)
	for {
		j := &command{ctx: context.Background(), call: func(context.Context) (any, error) { return nil, nil }, done: make(chan struct{})}
		select {
		case r.idle <- j:
			<-j.done
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no goroutine waited for a command after the first")
			}
			continue
		}
		break
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle goroutine did not end")
	}
	select {
	case <-ended:
		t.Fatal("two goroutines ended: the second command did not reuse the first's")
	case <-time.After(100 * time.Millisecond):
	}
}
