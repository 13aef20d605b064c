package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// command is one call to Redis, run by a runner's goroutine for a caller
// that may stop waiting for it.
type command struct {
	ctx  context.Context
	call func(context.Context) (any, error)
	v    any
	err  error
	done chan struct{} // closed once v and err are set
}

// runnerIdle is how long an idle goroutine of a runner waits for the next
// command before it ends.
const runnerIdle = 30 * time.Second

// runner runs commands on goroutines that outlive them, so that a caller
// can stop waiting at its deadline (go-redis, without
// ContextTimeoutEnabled, waits out its ReadTimeout), without a new
// goroutine, and the growth of its stack, for every command. A command
// goes to an idle goroutine when there is one, else to a new one; a
// goroutine idle for runnerIdle ends.
type runner struct {
	idle chan *command // unbuffered: a send succeeds only to an idle goroutine
	// linger replaces runnerIdle, and ended is called as a goroutine
	// ends: for tests.
	linger time.Duration
	ended  func()
}

// start hands j to a goroutine.
func (r *runner) start(j *command) {
	select {
	case r.idle <- j:
	default:
		go r.work(j)
	}
}

// work runs j, then the commands handed to it while it is idle.
func (r *runner) work(j *command) {
	linger := runnerIdle
	if r.linger > 0 {
		linger = r.linger
	}
	t := time.NewTimer(linger)
	defer t.Stop()
	for {
		j.v, j.err = j.call(j.ctx)
		close(j.done)
		t.Reset(linger)
		select {
		case j = <-r.idle:
		case <-t.C:
			if r.ended != nil {
				r.ended()
			}
			return
		}
	}
}

// bounder gives each call to Redis the store's deadline and returns by it
// whatever the client does: go-redis ignores the context while it reads
// unless Options.ContextTimeoutEnabled is set, so on a client without it a
// call runs on a runner's goroutine, which the caller stops waiting for at
// the deadline. The deadline in the call's context also ends go-redis'
// retries. ClaimStore and OutcomeStore both call through one.
type bounder struct {
	timeout time.Duration
	// direct: the client keeps contexts' deadlines itself
	// (ContextTimeoutEnabled), so calls need no goroutine.
	direct bool
	runner runner
}

func newBounder(client redis.UniversalClient, timeout time.Duration) *bounder {
	return &bounder{timeout: timeout, direct: keepsDeadlines(client), runner: runner{idle: make(chan *command)}}
}

// call runs f under the deadline: the store's timeout, or ctx's when that
// comes first.
func (b *bounder) call(ctx context.Context, f func(context.Context) (any, error)) (any, error) {
	ctx, cancel := boundCall(ctx, b.timeout)
	defer cancel()
	if b.direct {
		return f(ctx)
	}
	j := &command{ctx: ctx, call: f, done: make(chan struct{})}
	b.runner.start(j)
	select {
	case <-j.done:
		return j.v, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
