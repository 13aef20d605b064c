package redisstore

import (
	"context"
	"time"
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
	t := time.NewTimer(runnerIdle)
	defer t.Stop()
	for {
		j.v, j.err = j.call(j.ctx)
		close(j.done)
		t.Reset(runnerIdle)
		select {
		case j = <-r.idle:
		case <-t.C:
			return
		}
	}
}
