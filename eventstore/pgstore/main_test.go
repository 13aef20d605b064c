package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// The tests share one throwaway server (or PAYMENTS_TEST_POSTGRES_URL), each
// in tables of its own; the outage test starts a server of its own.
func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// newPool connects to url; the pool is closed when the test ends.
func newPool(tb testing.TB, url string, maxConns int32) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// sharedPool is a pool on the shared server.
func sharedPool(tb testing.TB) *pgxpool.Pool {
	return newPool(tb, testservers.SharedPostgres(tb).URL(), 8)
}

// uniqueName returns a table name no other test uses.
func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// dropOnCleanup drops table when the test ends.
func dropOnCleanup(tb testing.TB, pool *pgxpool.Pool, table string) {
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+table)
	})
}

// newStore returns a migrated store on a fresh table of pool.
func newStore(tb testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) (*pgstore.ClaimStore, string) {
	tb.Helper()
	table := uniqueName("events_")
	s, err := pgstore.NewClaimStore(pool, append([]pgstore.Option{pgstore.WithTable(table)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	dropOnCleanup(tb, pool, table)
	if err := s.Migrate(testCtx(tb)); err != nil {
		tb.Fatal(err)
	}
	return s, table
}

// fixture builds n stores, each on a pool of its own, over one fresh table
// of the server at url.
func fixture(tb testing.TB, url string, n int, lease time.Duration, poolSize int32) storetest.Fixture {
	tb.Helper()
	table := uniqueName("events_")
	var opts []pgstore.Option
	opts = append(opts, pgstore.WithTable(table))
	if lease > 0 {
		opts = append(opts, pgstore.WithLease(lease))
	}
	f := storetest.Fixture{}
	var admin *pgxpool.Pool
	for i := 0; i < n; i++ {
		pool := newPool(tb, url, poolSize)
		s, err := pgstore.NewClaimStore(pool, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			admin = pool
			dropOnCleanup(tb, pool, table)
			if err := s.Migrate(testCtx(tb)); err != nil {
				tb.Fatal(err)
			}
		}
		f.Stores = append(f.Stores, s)
	}
	f.TTL = func(id string) time.Duration {
		var secs float64
		err := admin.QueryRow(testCtx(tb), "SELECT EXTRACT(EPOCH FROM expires_at - now())::float8 FROM "+table+" WHERE event_id = $1", id).Scan(&secs)
		if err != nil {
			tb.Fatalf("TTL(%s): %v", id, err)
		}
		return time.Duration(secs * float64(time.Second))
	}
	f.Expire = func(id string) {
		if _, err := admin.Exec(testCtx(tb), "UPDATE "+table+" SET expires_at = now() - interval '1 second' WHERE event_id = $1", id); err != nil {
			tb.Fatalf("Expire(%s): %v", id, err)
		}
	}
	f.Replica = func(dial storetest.Dialer) webhook.ClaimStore {
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			tb.Fatal(err)
		}
		cfg.MaxConns = poolSize
		cfg.ConnConfig.DialFunc = pgconn.DialFunc(dial)
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(pool.Close)
		s, err := pgstore.NewClaimStore(pool, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	return f
}

var backend = storetest.Backend{
	Stores: func(tb testing.TB, n int, lease time.Duration) storetest.Fixture {
		return fixture(tb, testservers.SharedPostgres(tb).URL(), n, lease, 8)
	},
	Outage: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, storetest.Server) {
		srv := testservers.StartPostgres(tb)
		return fixture(tb, srv.URL(), n, lease, 4), srv
	},
	Proxied: func(tb testing.TB, n int, lease time.Duration) (storetest.Fixture, *testservers.Proxy) {
		srv := testservers.SharedPostgres(tb)
		proxy := testservers.StartProxy(tb, hostOf(tb, srv.URL()))
		return fixture(tb, proxy.URL(tb, srv.URL()), n, lease, 8), proxy
	},
}

// hostOf is the host:port of a server's URL.
func hostOf(tb testing.TB, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal("the server's URL does not parse")
	}
	return u.Host
}

func TestConformance(t *testing.T) { storetest.Conformance(t, backend) }

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

func TestPendingCompletions(t *testing.T) {
	t.Parallel()
	storetest.PendingCompletions(t, backend)
}

func BenchmarkHandler(b *testing.B) {
	srv := testservers.SharedPostgres(b)
	pool := newPool(b, srv.URL(), storetest.BenchSenders)
	s, _ := newStore(b, pool)
	storetest.BenchmarkHandler(b, s)
}

var _ webhook.ClaimStore = (*pgstore.ClaimStore)(nil)
