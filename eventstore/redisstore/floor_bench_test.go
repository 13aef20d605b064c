package redisstore_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// BenchmarkFloor runs our handler on redisstore beside a hand-written
// receiver with the same guarantee (at-least-once, deduped across
// replicas), on one throwaway Redis of its own that appends every write to
// its log before answering (appendfsync always), under the load of
// storetest.FloorRun (16 senders, 3 replicas, two thirds of the deliveries
// duplicates; see BENCHMARKS.md):
//
//   - ours: redisstore on a client made as the package doc's minimal example
//     makes it (redis.NewClient with the address and password alone);
//   - ours-ctxtimeout: the same with Options.ContextTimeoutEnabled;
//   - ours-nomemory: ours remembering no event (storetest.NoRecentlyDone());
//   - baseline: SET key token NX PX lease GET (one command: a nil answer
//     is the claim, "done" a duplicate, anything else 409); process; SET key
//     done PX retention.
//
// Besides storetest.FloorRun's metrics, each run reports per delivery the
// commands the receiver sent (counted by a client hook: round trips), the
// commands the server ran (INFO commandstats, which counts those a script
// calls besides the script itself; connection set-up and the benchmark's
// own INFO and PING left out) and the server's CPU (INFO cpu).
// Under -v it prints the ratios; PAYMENTS_FLOOR_ROUNDS=n runs n interleaved
// rounds.
func BenchmarkFloor(b *testing.B) {
	srv := testservers.StartRedis(b, true)
	admin := newClient(b, srv.URL(), 2)
	table := &storetest.FloorTable{}
	sides := []struct {
		name  string
		build func(b *testing.B, r *redisFloorRun) http.Handler
	}{
		{"ours", oursRedis(false)},
		{"ours-ctxtimeout", oursRedis(true)},
		{"ours-nomemory", oursRedis(false, storetest.NoRecentlyDone())},
		{storetest.FloorBaseline, baselineRedis},
	}
	for round := range storetest.FloorRounds(b) {
		for _, s := range storetest.FloorOrder(round, sides) {
			b.Run("redis-default/"+s.name, func(b *testing.B) {
				r := &redisFloorRun{url: srv.URL(), admin: admin, prefix: uniquePrefix(b, admin), plan: storetest.NewFloorPlan(b, b.N)}
				handlers := make([]http.Handler, storetest.FloorReplicas)
				for i := range handlers {
					handlers[i] = s.build(b, r)
				}
				table.Report(b, r.measure(b, handlers))
			})
		}
	}
	table.PrintIfVerbose()
}

// redisFloorRun is one run of one side.
type redisFloorRun struct {
	url     string
	admin   *redis.Client
	prefix  string
	clients []*redis.Client
	sent    atomic.Int64
	once    storetest.FloorOnce
	plan    *storetest.FloorPlan
}

// client is a replica's client; ctxTimeout sets ContextTimeoutEnabled.
func (r *redisFloorRun) client(b *testing.B, ctxTimeout bool) *redis.Client {
	opts, err := redis.ParseURL(r.url)
	if err != nil {
		b.Fatal(err)
	}
	opts.PoolSize, opts.ContextTimeoutEnabled = storetest.FloorSenders, ctxTimeout
	c := redis.NewClient(opts)
	b.Cleanup(func() { _ = c.Close() })
	c.AddHook((*countingHook)(&r.sent))
	r.clients = append(r.clients, c)
	return c
}

// countingHook counts the commands a client sends.
type countingHook atomic.Int64

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		(*atomic.Int64)(h).Add(1)
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		(*atomic.Int64)(h).Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// redisCounters reads the commands the server ran (but connection set-up
// and the benchmark's own) and its CPU.
func (r *redisFloorRun) counters(b *testing.B) (cmds int64, cpu time.Duration) {
	info, err := r.admin.Info(testCtx(b), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		switch {
		case !ok:
		case strings.HasPrefix(name, "cmdstat_"):
			switch strings.TrimPrefix(name, "cmdstat_") {
			case "info", "ping", "hello", "auth", "client", "select", "command":
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(val, "calls="), ",")
			n, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				b.Fatalf("INFO commandstats: %q", sc.Text())
			}
			cmds += n
		case name == "used_cpu_sys" || name == "used_cpu_user":
			s, err := strconv.ParseFloat(val, 64)
			if err != nil {
				b.Fatalf("INFO cpu: %q", sc.Text())
			}
			cpu += time.Duration(s * float64(time.Second))
		}
	}
	return cmds, cpu
}

// measure opens every connection of the replicas, runs the plan, checks
// that each event was processed once, and returns the metrics.
func (r *redisFloorRun) measure(b *testing.B, handlers []http.Handler) storetest.FloorMetrics {
	ctx := testCtx(b)
	for _, c := range r.clients {
		conns := make([]*redis.Conn, storetest.FloorSenders)
		for i := range conns {
			conns[i] = c.Conn()
			if err := conns[i].Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
		for _, conn := range conns {
			_ = conn.Close()
		}
	}
	cmds0, cpu0 := r.counters(b)
	r.sent.Store(0)
	m := storetest.FloorRun(b, r.plan, handlers)
	sent := r.sent.Load()
	cmds1, cpu1 := r.counters(b)
	n := float64(b.N)
	m["cmds/delivery"] = float64(sent) / n
	m["redis-calls/delivery"] = float64(cmds1-cmds0) / n
	m["redis-cpu-us/delivery"] = float64(cpu1-cpu0) / float64(time.Microsecond) / n
	r.once.Check(b, r.plan)
	return m
}

// oursRedis builds a replica of our handler on redisstore, as a merchant
// sets it up: default options, a function that does nothing (but count).
func oursRedis(ctxTimeout bool, opts ...webhook.HandlerOption) func(b *testing.B, r *redisFloorRun) http.Handler {
	return func(b *testing.B, r *redisFloorRun) http.Handler {
		s, err := redisstore.NewClaimStore(r.client(b, ctxTimeout), redisstore.WithPrefix(r.prefix))
		if err != nil {
			b.Fatal(err)
		}
		return webhook.NewHandler(storetest.Verifier(b), func(_ context.Context, ev *payments.Event) error {
			r.once.Add(ev.ID)
			return nil
		}, append([]webhook.HandlerOption{webhook.WithClaimStore(s)}, opts...)...)
	}
}

// baselineRedis is the hand-written receiver: a claim in one native command
// (Redis 7), a duplicate of a done event answered by that same command.
func baselineRedis(b *testing.B, r *redisFloorRun) http.Handler {
	c := r.client(b, false)
	claim := redis.SetArgs{Mode: "NX", TTL: redisstore.DefaultLease, Get: true}
	return storetest.HandWritten(b, 0, func(ctx context.Context, ev *payments.Event) int {
		key := r.prefix + ev.ID
		token := make([]byte, 16)
		_, _ = rand.Read(token)
		old, err := c.SetArgs(ctx, key, hex.EncodeToString(token), claim).Result()
		switch {
		case err == redis.Nil: // claimed
		case err != nil:
			return http.StatusServiceUnavailable
		case old == "done":
			return http.StatusOK
		default:
			return http.StatusConflict
		}
		r.once.Add(ev.ID) // the merchant's processing
		if err := c.Set(ctx, key, "done", redisstore.DefaultRetention).Err(); err != nil {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
}
