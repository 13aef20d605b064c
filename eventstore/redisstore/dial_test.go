package redisstore_test

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// switchDialer dials the shared server, or refuses every dial while down,
// as a restarting Redis does.
type switchDialer struct {
	base  func(ctx context.Context, network, addr string) (net.Conn, error)
	down  atomic.Bool
	dials atomic.Int64
}

func (d *switchDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	if !d.down.Load() {
		return d.base(ctx, network, addr)
	}
	return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
}

// downClient returns a client of one connection whose dials d refuses
// (Redis is down), which has tried to connect for a while, with
// RetryDial or without.
func downClient(t *testing.T, retry bool) (*redis.Client, *switchDialer) {
	t.Helper()
	opts, err := redis.ParseURL(testservers.SharedRedis(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	d := &switchDialer{base: redis.NewDialer(opts)}
	d.down.Store(true)
	opts.PoolSize, opts.ContextTimeoutEnabled, opts.Dialer = 1, true, d.dial
	if retry {
		opts.Dialer = redisstore.RetryDial(d.dial)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c, d
}

// brokenClient returns a client whose pool gave up dialling: go-redis,
// after as many failed dials as its PoolSize, fails every command at once,
// without dialling, until its background probe (once a second) connects.
func brokenClient(t *testing.T) (*redis.Client, *switchDialer) {
	t.Helper()
	c, d := downClient(t, false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		before := d.dials.Load()
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			t.Fatal("a ping through a refusing dialer succeeded")
		}
		// Until it gives up, go-redis dials for each command, and again
		// every 100 ms while the dials fail.
		if d.dials.Load() == before {
			return c, d
		}
		if time.Now().After(deadline) {
			t.Fatal("go-redis never gave up dialling")
		}
	}
}

// A store call made while go-redis refuses at once (after failed dials)
// waits for the connection until its deadline, instead of failing: it had
// sent nothing. Before, the Claim failed at once, and a renewal with it.
func TestStoreRedialsWithinItsDeadline(t *testing.T) {
	t.Parallel()
	c, d := brokenClient(t)
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(t, sharedClient(t))), redisstore.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { d.down.Store(false) }) // Redis is back
	// go-redis' probe connects within a second, and the Claim is sent.
	if claim, err := s.Claim(context.Background(), "evt_1"); err != nil || claim.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim while the client reconnects = %v, %v; want acquired once it has", claim.Status, err)
	}
}

// With RetryDial, each of go-redis' attempts to dial keeps trying for its
// DialTimeout (5 s), so a restart shorter than that never makes the pool
// give up dialling (as above), and the dial in progress connects within
// about 50 ms of Redis accepting connections: a Claim with a deadline of
// 700 ms, made as Redis comes back after 1.5 s down, succeeds.
func TestRetryDialRidesOutARestart(t *testing.T) {
	t.Parallel()
	c, d := downClient(t, true)
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		if err := c.Ping(ctx).Err(); err == nil {
			t.Fatal("a ping through a refusing dialer succeeded")
		}
		cancel()
	}
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(t, sharedClient(t))), redisstore.WithTimeout(700*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	d.down.Store(false)
	if claim, err := s.Claim(context.Background(), "evt_1"); err != nil || claim.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim as Redis comes back = %v, %v; want acquired", claim.Status, err)
	}
}

// RetryDial returns the last error once its context ends, and a dial
// that succeeds at once is not retried.
func TestRetryDialGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	dial := redisstore.RetryDial(func(context.Context, string, string) (net.Conn, error) {
		calls.Add(1)
		return nil, refused
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	conn, err := dial(ctx, "tcp", "127.0.0.1:1")
	if conn != nil || err != refused {
		t.Fatalf("RetryDial = %v, %v; want the last refusal", conn, err)
	}
	if n := calls.Load(); n < 2 {
		t.Errorf("%d dials in 300 ms, want several (one every 50 ms)", n)
	}
	server, client := net.Pipe()
	defer server.Close()
	calls.Store(0)
	dial = redisstore.RetryDial(func(context.Context, string, string) (net.Conn, error) {
		calls.Add(1)
		return client, nil
	})
	if conn, err := dial(context.Background(), "tcp", "x"); conn != client || err != nil || calls.Load() != 1 {
		t.Errorf("RetryDial of a working dial = %v, %v after %d dials", conn, err, calls.Load())
	}
}

// renewSignal is a store that signals each renewal that succeeded.
type renewSignal struct {
	webhook.ClaimStore
	renewed chan struct{}
}

func (s renewSignal) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	c, err := s.ClaimStore.Renew(ctx, c)
	if err == nil {
		select {
		case s.renewed <- struct{}{}:
		default:
		}
	}
	return c, err
}

// A claim keeps its lease through a Redis restart (SIGKILL, back 1 s later)
// shorter than its lease (4 s), while other deliveries keep the client
// failing: the function runs on, uncancelled, the claim is still held when
// Redis is back (another replica finds it in progress), and the event is
// processed once. The server is killed just after a renewal, so the lease
// has about 2.5 s left when Redis is back: many times what the client
// takes to reconnect.
func TestLeaseSurvivesARestart(t *testing.T) {
	t.Parallel()
	srv := testservers.StartRedis(t, true)
	const leaseLen = 4 * time.Second
	stores := make([]*redisstore.ClaimStore, 2)
	for i := range stores {
		c := newClientWith(t, srv.URL(), 4, recommended)
		s, err := redisstore.NewClaimStore(c, redisstore.WithLease(leaseLen))
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	store := renewSignal{ClaimStore: stores[0], renewed: make(chan struct{}, 1)}
	started, release := make(chan struct{}), make(chan struct{})
	var calls, cancelled atomic.Int32
	h := webhook.NewHandler(storetest.Verifier(t), func(ctx context.Context, ev *payments.Event) error {
		if calls.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			cancelled.Add(1)
			return ctx.Err()
		}
	}, webhook.WithClaimStore(store))
	id := storetest.NewEventID(t)
	answered := make(chan int, 1)
	go func() { answered <- storetest.Deliver(h, storetest.EventBody(id)) }()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s after 30 s", what)
		}
	}
	wait(started, "call of the function")
	wait(store.renewed, "renewal before the restart")
	srv.Stop(t)
	select { // a renewal that landed just before the kill
	case <-store.renewed:
	default:
	}
	// Other deliveries meanwhile: their claims fail, and go-redis gives
	// up dialling for a while.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = stores[0].Claim(context.Background(), storetest.NewEventID(t))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	srv.Start(t)
	wait(store.renewed, "renewal after the restart")
	close(stop)
	<-done
	if n := cancelled.Load(); n != 0 {
		t.Fatal("the function was cancelled: the lease did not survive the restart")
	}
	if c, err := stores[1].Claim(testCtx(t), id); err != nil || c.Status != webhook.ClaimInProgress {
		t.Fatalf("another replica's Claim after the restart = %v, %v; want in progress", c.Status, err)
	}
	close(release)
	if code := <-answered; code != 200 {
		t.Fatalf("the delivery was answered %d, want 200", code)
	}
	if c, err := stores[1].Claim(testCtx(t), id); err != nil || c.Status != webhook.ClaimDone {
		t.Fatalf("Claim after the function returned = %v, %v; want done", c.Status, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the function ran %d times, want 1", n)
	}
}
