package storetest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

// replicaSet is the matrix's replicas behind a round-robin, each of which
// may be killed and started again.
type replicaSet struct {
	t   *testing.T
	f   Fixture
	fn  func(webhook.ClaimStore, func() bool) webhook.EventFunc
	rr  atomic.Uint64
	mu  sync.Mutex
	cur []*incarnation
	all []*incarnation
	// killedInFlight counts the deliveries in flight at the replicas
	// killed: a kill that hits none proves nothing.
	killedInFlight atomic.Int64
	// build, when set, builds a replica's process in place of a handler
	// on a store of f (the Queue's rows: matrix_queue.go).
	build func(in *incarnation)
	// The Queue's kills: killedJobs counts the jobs running at the
	// processes killed mid-job; with killAfterInsert set, the next
	// process whose enqueue commits is killed before it answers, and sent
	// on killedAfterInsert.
	killedJobs, killedAfterInsertHits atomic.Int64
	killedAt                          atomic.Int64 // the worker's kill, in Unix ns
	killAfterInsert                   atomic.Bool
	killedAfterInsert                 chan *incarnation
}

func newReplicaSet(t *testing.T, f Fixture, fn func(webhook.ClaimStore, func() bool) webhook.EventFunc, n int) *replicaSet {
	rs := &replicaSet{t: t, f: f, fn: fn, cur: make([]*incarnation, n)}
	for i := range n {
		rs.start(i)
	}
	return rs
}

// next is the replica the load balancer sends the next attempt to.
func (rs *replicaSet) next() *incarnation {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.cur[rs.rr.Add(1)%uint64(len(rs.cur))]
}

// live returns a replica whose process is alive.
func (rs *replicaSet) live() *incarnation {
	for {
		if in := rs.next(); in.alive() {
			return in
		}
	}
}

// start starts replica i: a new process, with a pool of its own.
func (rs *replicaSet) start(i int) {
	in := &incarnation{killed: make(chan struct{}), index: i}
	if rs.build != nil {
		rs.build(in)
		rs.mu.Lock()
		rs.cur[i] = in
		rs.all = append(rs.all, in)
		rs.mu.Unlock()
		return
	}
	store := rs.f.Replica(in.dial)
	// The function first (Transactional switches a pgstore to
	// ClaimAndRun), then the handler on the killable store, which keeps
	// that path.
	fn := rs.fn(store, in.alive)
	var wrapped webhook.ClaimStore
	wrapped, in.store = killableStore(store)
	in.h = webhook.NewHandler(Verifier(rs.t), fn, webhook.WithClaimStore(wrapped))
	rs.mu.Lock()
	rs.cur[i] = in
	rs.all = append(rs.all, in)
	rs.mu.Unlock()
}

// kill kills replica i, as SIGKILL would: its connections to the database
// and to the senders drop at once, and it never reaches anything again.
// The load balancer still sends it attempts (connection refused) until it
// is started again.
func (rs *replicaSet) kill(i int) {
	rs.mu.Lock()
	in := rs.cur[i]
	rs.mu.Unlock()
	rs.killIncarnation(in)
}

func (rs *replicaSet) killIncarnation(in *incarnation) {
	in.kill()
	rs.killedInFlight.Add(in.hitInFlight.Load())
}

// shutdown waits for the live replicas' pending completions, as the
// example receiver does on SIGTERM, and stops the dead ones' goroutines.
func (rs *replicaSet) shutdown(t *testing.T) {
	rs.mu.Lock()
	all := append([]*incarnation(nil), rs.all...)
	rs.mu.Unlock()
	for _, in := range all {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if !in.alive() {
			cancel() // a dead process waits for nothing
		}
		if err := in.h.Shutdown(ctx); err != nil && in.alive() {
			t.Errorf("a replica's shutdown: %v", err)
		}
		if in.stop != nil {
			if err := in.stop(ctx); err != nil && in.alive() {
				t.Errorf("a replica's workers' stop: %v", err)
			}
		}
		cancel()
	}
}

// incarnation is one process of a replica.
type incarnation struct {
	h     *webhook.Handler
	store *DeadStore // the handler's: refuses every call once killed
	// inflight counts the attempts being answered; hitInFlight is how
	// many there were when the process was killed.
	inflight, hitInFlight atomic.Int64
	dead                  atomic.Bool
	killed                chan struct{}
	mu                    sync.Mutex
	conns                 []net.Conn
	index                 int
	// stop stops the process's queue workers (the Queue's rows); running
	// counts the jobs its workers are running.
	stop    func(context.Context) error
	running atomic.Int64
}

func (in *incarnation) alive() bool { return !in.dead.Load() }

// dial makes the replica's database connections, and refuses once it is
// dead.
func (in *incarnation) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if in.dead.Load() {
		return nil, errDead
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.dead.Load() {
		_ = c.Close()
		return nil, errDead
	}
	in.conns = append(in.conns, c)
	return c, nil
}

// kill kills the process: its store refuses every later call before the
// process reads as dead (alive), then its connections close (no new one is
// dialled), then the senders' connections drop (killed). A process killed
// with SIGKILL does nothing at all after; the replica's goroutines run on,
// so whatever they do once they read as dead must reach no database.
func (in *incarnation) kill() {
	in.mu.Lock()
	if in.dead.Load() {
		in.mu.Unlock()
		return
	}
	in.store.Kill()
	in.hitInFlight.Store(in.inflight.Load())
	in.dead.Store(true)
	for _, c := range in.conns {
		_ = c.Close()
	}
	in.mu.Unlock()
	close(in.killed)
}

// deliver is one attempt of the sender: the status, 0 when the connection
// dropped (the replica died) or no answer came within matrixAttemptTimeout
// (timedOut).
func (in *incarnation) deliver(body []byte) (code int, took time.Duration, timedOut bool) {
	if !in.alive() {
		return 0, 0, false // connection refused
	}
	in.inflight.Add(1)
	defer in.inflight.Add(-1)
	start := time.Now()
	done := make(chan int, 1)
	go func() { done <- Deliver(in.h, body) }()
	t := time.NewTimer(matrixAttemptTimeout)
	defer t.Stop()
	select {
	case code := <-done:
		if !in.alive() {
			return 0, time.Since(start), false
		}
		return code, time.Since(start), false
	case <-in.killed:
		return 0, time.Since(start), false
	case <-t.C:
		return 0, time.Since(start), true
	}
}
