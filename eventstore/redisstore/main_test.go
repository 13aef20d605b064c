package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// The tests share one throwaway server (or PAYMENTS_TEST_REDIS_URL), each
// under a key prefix of its own; the outage test starts a persistent server
// of its own.
func TestMain(m *testing.M) {
	// go-redis's global logger prints every failed dial of the outage
	// test to stderr; the test checks the handler's own logs instead.
	redis.SetLogger(&logging.VoidLogger{})
	os.Exit(testservers.Main(m))
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// newClient connects to url with go-redis' default options; the client is
// closed when the test ends.
func newClient(tb testing.TB, url string, poolSize int) *redis.Client {
	tb.Helper()
	return newClientWith(tb, url, poolSize, nil)
}

// newClientWith is newClient with the options set by tune (nil: none).
func newClientWith(tb testing.TB, url string, poolSize int, tune func(*redis.Options)) *redis.Client {
	tb.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	opts.PoolSize = poolSize
	if tune != nil {
		tune(opts)
	}
	c := redis.NewClient(opts)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

func sharedClient(tb testing.TB) *redis.Client {
	return newClient(tb, testservers.SharedRedis(tb).URL(), 8)
}

// uniquePrefix returns a key prefix no other test uses, whose keys are
// deleted when the test ends.
func uniquePrefix(tb testing.TB, c redis.UniversalClient) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "test:" + hex.EncodeToString(b) + ":"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// recommended sets the client options the package documentation
// recommends: deadlines kept by the client, and dials retried.
func recommended(o *redis.Options) {
	o.ContextTimeoutEnabled = true
	dial := o.Dialer
	if dial == nil {
		dial = redis.NewDialer(o)
	}
	o.Dialer = redisstore.RetryDial(dial)
}

// fixture builds n stores, each on a client of its own with the
// recommended options, under one fresh prefix of the server at url.
func fixture(tb testing.TB, url string, n int, lease time.Duration, poolSize int) storetest.Fixture {
	tb.Helper()
	return fixtureWith(tb, url, n, lease, poolSize, recommended)
}

// fixtureWith is fixture with the clients' options set by tune (nil: as
// redis.ParseURL makes them).
func fixtureWith(tb testing.TB, url string, n int, lease time.Duration, poolSize int, tune func(*redis.Options)) storetest.Fixture {
	tb.Helper()
	admin := newClient(tb, url, 2)
	prefix := uniquePrefix(tb, admin)
	opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
	if lease > 0 {
		opts = append(opts, redisstore.WithLease(lease))
	}
	f := storetest.Fixture{}
	for i := 0; i < n; i++ {
		s, err := redisstore.NewClaimStore(newClientWith(tb, url, poolSize, tune), opts...)
		if err != nil {
			tb.Fatal(err)
		}
		f.Stores = append(f.Stores, s)
	}
	f.TTL = func(id string) time.Duration {
		d, err := admin.PTTL(testCtx(tb), prefix+id).Result()
		if err != nil {
			tb.Fatalf("TTL(%s): %v", id, err)
		}
		return d
	}
	f.Replica = func(dial storetest.Dialer) webhook.ClaimStore {
		o, err := redis.ParseURL(url)
		if err != nil {
			tb.Fatal(err)
		}
		o.PoolSize, o.Dialer = poolSize, dial
		if tune != nil {
			tune(o) // RetryDial wraps dial
		}
		c := redis.NewClient(o)
		tb.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.NewClaimStore(c, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	f.Expire = func(id string) {
		// Redis forgets the key exactly as it would when its TTL runs out.
		if err := admin.PExpire(testCtx(tb), prefix+id, time.Millisecond).Err(); err != nil {
			tb.Fatalf("Expire(%s): %v", id, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return f
}

// backend: stores on clients with the recommended options (the package
// documentation's), so that the client keeps the store's deadlines.
var backend = backendWith(recommended)

// defaultBackend: stores on clients with go-redis' default options, which
// keep no deadline while they read: the store runs their commands in its
// runner.
var defaultBackend = backendWith(nil)

func backendWith(tune func(*redis.Options)) storetest.Backend {
	return storetest.Backend{
		Stores: func(tb testing.TB, n int, lease time.Duration) storetest.Fixture {
			return fixtureWith(tb, testservers.SharedRedis(tb).URL(), n, lease, 8, tune)
		},
		Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
			srv := testservers.StartRedis(tb, true)
			return fixtureWith(tb, srv.URL(), n, lease, 4, tune), srv
		},
		Proxied: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, *testservers.Proxy) {
			srv := testservers.SharedRedis(tb)
			u, err := url.Parse(srv.URL())
			if err != nil {
				tb.Fatal("the server's URL does not parse")
			}
			proxy := testservers.StartProxy(tb, u.Host)
			return fixtureWith(tb, proxy.URL(tb, srv.URL()), n, lease, 8, tune), proxy
		},
	}
}

func TestConformance(t *testing.T) { storetest.Conformance(t, backend) }

func TestConformanceDefaultClient(t *testing.T) { storetest.Conformance(t, defaultBackend) }

func TestReplicas(t *testing.T) {
	t.Parallel()
	storetest.Replicas(t, backend, storetest.DefaultReplicaConfig)
}

func TestDeadReplica(t *testing.T) {
	t.Parallel()
	storetest.DeadReplica(t, backend)
}

func TestOutage(t *testing.T) {
	t.Parallel()
	storetest.Outage(t, backend, storetest.LedgerProcessor())
}

func TestKilledReplica(t *testing.T) {
	t.Parallel()
	storetest.KilledReplica(t, backend)
}

func TestHungStore(t *testing.T) {
	t.Parallel()
	storetest.HungStore(t, backend)
}

func TestHungStoreDefaultClient(t *testing.T) {
	t.Parallel()
	storetest.HungStore(t, defaultBackend)
}

func TestOutageDefaultClient(t *testing.T) {
	t.Parallel()
	storetest.Outage(t, defaultBackend, storetest.LedgerProcessor())
}

func TestPendingCompletions(t *testing.T) {
	t.Parallel()
	storetest.PendingCompletions(t, backend)
}

func BenchmarkHandler(b *testing.B) {
	c := newClient(b, testservers.SharedRedis(b).URL(), storetest.BenchSenders)
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(b, c)))
	if err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkHandler(b, s)
}

// BenchmarkHandlerContextTimeout: the client keeps the store's deadlines
// itself (Options.ContextTimeoutEnabled), so commands run without a
// goroutine of the store's.
func BenchmarkHandlerContextTimeout(b *testing.B) {
	opts, err := redis.ParseURL(testservers.SharedRedis(b).URL())
	if err != nil {
		b.Fatal(err)
	}
	opts.PoolSize, opts.ContextTimeoutEnabled = storetest.BenchSenders, true
	c := redis.NewClient(opts)
	b.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(b, c)))
	if err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkHandler(b, s)
}

var _ webhook.ClaimStore = (*redisstore.ClaimStore)(nil)
