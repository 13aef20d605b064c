package redisstore

import (
	"context"
	"errors"
	"net"
	"time"
)

// redialPause is how long the store, and RetryDial, wait before they try
// again a connection that could not be made.
const redialPause = 50 * time.Millisecond

// RetryDial returns a dialer for the Dialer of go-redis' options that
// dials with dial again every 50 ms while it fails, until its context
// ends, and then returns the last error. Give it the client's own dialer,
// so that TLS and timeouts are kept:
//
//	opts.Dialer = redisstore.RetryDial(redis.NewDialer(opts))
//
// (a nil dial is a plain TCP dial, without TLS).
//
// Why: after as many failed dials as its PoolSize, which a Redis restart
// makes, go-redis fails every command at once, without dialling, until a
// probe it runs in the background connects, and that probe dials once a
// second: a client stays failing for up to a second after Redis is back,
// and a claim whose lease had less than that left is lost. With RetryDial,
// each of go-redis' dials keeps trying for its DialTimeout (5 s by
// default), so a restart shorter than that does not bring go-redis to
// give up dialling, and the probe too keeps trying: the client works again
// within about 50 ms of Redis accepting connections
// (TestRetryDialRidesOutARestart). go-redis dials in the background: a
// command waiting for a connection still gives up at its own deadline, and
// one without a deadline waits for a Redis that stays down up to
// DialTimeout times DialerRetries (25 s by default) for each of go-redis'
// tries of the command. The store gives every
// command its deadline (WithTimeout); give yours one too.
func RetryDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		for {
			conn, err := dial(ctx, network, addr)
			if err == nil {
				return conn, nil
			}
			if !pause(ctx) {
				return nil, err
			}
		}
	}
}

// redial runs call, and runs it again every redialPause while it fails
// without having sent anything (no connection could be made, or go-redis
// refused at once after failed dials), until ctx ends.
func redial(ctx context.Context, call func(context.Context) (any, error)) (any, error) {
	for {
		v, err := call(ctx)
		if err == nil || !nothingSent(err) || !pause(ctx) {
			return v, err
		}
	}
}

// nothingSent says whether err is a failure to connect: the command was
// never sent, so running it again cannot run it twice.
func nothingSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// pause waits redialPause, and returns false at once when ctx ends first.
func pause(ctx context.Context) bool {
	t := time.NewTimer(redialPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
