package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

func TestNewRejectsInvalidOptions(t *testing.T) {
	// A pool connects lazily: no server is needed to build one.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	long := strings.Repeat("a", 49)
	for name, opts := range map[string][]pgstore.Option{
		"empty table":          {pgstore.WithTable("")},
		"upper case":           {pgstore.WithTable("Events")},
		"quote":                {pgstore.WithTable(`events"; DROP TABLE x; --`)},
		"space":                {pgstore.WithTable("my events")},
		"leading digit":        {pgstore.WithTable("1events")},
		"dash":                 {pgstore.WithTable("web-events")},
		"two dots":             {pgstore.WithTable("a.b.c")},
		"empty schema":         {pgstore.WithTable(".events")},
		"too long":             {pgstore.WithTable(long)},
		"zero lease":           {pgstore.WithLease(0)},
		"negative lease":       {pgstore.WithLease(-time.Second)},
		"sub-ms lease":         {pgstore.WithLease(1500 * time.Microsecond)},
		"lease over retention": {pgstore.WithLease(time.Hour), pgstore.WithRetention(time.Hour)},
		"short retention":      {pgstore.WithRetention(2*webhook.DefaultSignatureTolerance - time.Second)},
		"zero retention":       {pgstore.WithRetention(0)},
		"negative purge":       {pgstore.WithPurgeEvery(-1)},
	} {
		s, err := pgstore.NewClaimStore(pool, opts...)
		if !errors.Is(err, pgstore.ErrInvalidOption) || s != nil {
			t.Errorf("%s: NewClaimStore = %v, %v; want ErrInvalidOption", name, s, err)
		}
	}
	if _, err := pgstore.NewClaimStore(nil); !errors.Is(err, pgstore.ErrInvalidOption) {
		t.Errorf("NewClaimStore(nil) = %v, want ErrInvalidOption", err)
	}
	for _, opts := range [][]pgstore.Option{
		nil,
		{pgstore.WithTable("ops.webhook_events")},
		{pgstore.WithTable(long[:48])},
		{pgstore.WithLease(time.Millisecond), pgstore.WithRetention(pgstore.MinRetention), pgstore.WithPurgeEvery(0)},
	} {
		if _, err := pgstore.NewClaimStore(pool, opts...); err != nil {
			t.Errorf("NewClaimStore with valid options: %v", err)
		}
	}
}

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	schema := uniqueName("ops_")
	table := schema + ".webhook_events"
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	s, err := pgstore.NewClaimStore(pool, pgstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	// Every replica migrates at start-up, at once.
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Migrate(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	var cols []string
	rows, err := pool.Query(ctx, `SELECT column_name || ' ' || data_type FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'webhook_events' ORDER BY ordinal_position`, schema)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := "event_id text,state text,token text,expires_at timestamp with time zone,claimed_at timestamp with time zone"
	if got := strings.Join(cols, ","); got != want {
		t.Errorf("columns: %s, want %s", got, want)
	}
	var indexes int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = 'webhook_events'`, schema).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 2 {
		t.Errorf("%d indexes, want 2 (the primary key and claimed_at)", indexes)
	}
	// The store works on the schema-qualified table.
	c, err := s.Claim(ctx, "evt-1")
	if err != nil || c.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim = %v, %v", c.Status, err)
	}
}

// The package documentation and the README show exactly what Migrate runs,
// for a DBA.
func TestMigrationSQLIsInThePackageDocAndREADME(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := pgstore.NewClaimStore(pool)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "//\t") {
			doc.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
		}
	}
	if !strings.Contains(doc.String(), s.MigrationSQL()) {
		t.Errorf("doc.go's indented block does not contain the migration:\n%s", s.MigrationSQL())
	}
	readme, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _ := readmecheck.Section(string(readme), "## Running several replicas")
	if sql := readmecheck.Code(section, "sql"); len(sql) != 1 || sql[0] != s.MigrationSQL() {
		t.Errorf("the sql block of docs/webhooks.md's \"Running several replicas\" is not the migration:\n%s", s.MigrationSQL())
	}
}

func TestPurge(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	s, table := newStore(t, pool, pgstore.WithPurgeEvery(0))
	claim := func(id string) webhook.Claim {
		c, err := s.Claim(ctx, id)
		if err != nil || c.Status != webhook.ClaimAcquired {
			t.Fatalf("Claim(%s) = %v, %v", id, c.Status, err)
		}
		return c
	}
	for _, id := range []string{"done-expired", "done-kept", "done-expired-2"} {
		if err := s.Complete(ctx, claim(id)); err != nil {
			t.Fatal(err)
		}
	}
	lapsed := claim("lapsed")
	claim("live")
	expire := func(ids ...string) {
		// Expired, and claimed longer than a retention ago.
		if _, err := pool.Exec(ctx, "UPDATE "+table+" SET expires_at = now() - interval '1 second', claimed_at = now() - interval '30 days' WHERE event_id = ANY($1)", ids); err != nil {
			t.Fatal(err)
		}
	}
	expire("done-expired", "done-expired-2", "lapsed")
	n, err := s.Purge(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Purge = %d, %v; want 3", n, err)
	}
	if got := ids(t, pool, table); got != "done-kept,live" {
		t.Errorf("rows left: %s, want done-kept,live", got)
	}
	// The lapsed claim's function succeeded after all, and nobody took the
	// event over: its late Complete writes the completion again.
	if err := s.Complete(ctx, lapsed); err != nil {
		t.Fatalf("Complete of a purged claim nobody took: %v", err)
	}
	if c, err := s.Claim(ctx, "lapsed"); err != nil || c.Status != webhook.ClaimDone {
		t.Fatalf("after the late Complete: %v, %v; want done", c.Status, err)
	}
	if err := s.Complete(ctx, webhook.Claim{EventID: "live", Token: lapsed.Token}); !errors.Is(err, webhook.ErrClaimLost) {
		t.Fatalf("Complete of an id another live claim holds: %v, want ErrClaimLost", err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM "+table+" WHERE event_id = 'lapsed'"); err != nil {
		t.Fatal(err)
	}

	// More than a batch: Purge goes on until none is left.
	if _, err := pool.Exec(ctx, "INSERT INTO "+table+` (event_id, state, token, expires_at, claimed_at)
		SELECT 'old-' || i, 'done', 't', now() - interval '1 day', now() - interval '8 days' FROM generate_series(1, $1::int) AS i`, 2*pgstore.PurgeBatch+7); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx); err != nil || n != 2*pgstore.PurgeBatch+7 {
		t.Fatalf("Purge = %d, %v; want %d", n, err, 2*pgstore.PurgeBatch+7)
	}
	if n, err := s.Purge(ctx); err != nil || n != 0 {
		t.Fatalf("Purge of nothing = %d, %v", n, err)
	}
}

// ids lists a table's event ids in order.
func ids(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	var out string
	if err := pool.QueryRow(testCtx(t), "SELECT coalesce(string_agg(event_id, ',' ORDER BY event_id), '') FROM "+table).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpportunisticPurge(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	ctx := testCtx(t)
	for _, every := range []int{0, 3} {
		s, table := newStore(t, pool, pgstore.WithPurgeEvery(every))
		if _, err := pool.Exec(ctx, "INSERT INTO "+table+` (event_id, state, token, expires_at, claimed_at)
			SELECT 'old-' || i, 'done', 't', now() - interval '1 day', now() - interval '8 days' FROM generate_series(1, 10) AS i`); err != nil {
			t.Fatal(err)
		}
		count := func() (n int) {
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE event_id LIKE 'old-%'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for i := 1; i <= 5; i++ {
			if _, err := s.Claim(ctx, fmt.Sprint("new-", i)); err != nil {
				t.Fatal(err)
			}
			want := 10
			if every == 3 && i >= 3 {
				want = 0
			}
			if got := count(); got != want {
				t.Fatalf("WithPurgeEvery(%d): after %d claims %d expired rows are left, want %d", every, i, got, want)
			}
		}
	}
}

func TestOpportunisticPurgeFailureIsLogged(t *testing.T) {
	t.Parallel()
	srv := testservers.SharedPostgres(t)
	admin := sharedPool(t)
	ctx := testCtx(t)
	s, table := newStore(t, admin)
	_ = s
	// A role that may claim but not delete: the purge fails.
	role, pass := uniqueName("claimer_"), uniqueName("pw")
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD '" + pass + "'",
		"GRANT SELECT, INSERT, UPDATE ON " + table + " TO " + role,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP OWNED BY "+role)
		_, _ = admin.Exec(context.Background(), "DROP ROLE "+role)
	})
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, pass)
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	limited, err := pgstore.NewClaimStore(newPool(t, u.String(), 2), pgstore.WithTable(table), pgstore.WithPurgeEvery(1), pgstore.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	c, err := limited.Claim(ctx, "evt-1")
	if err != nil || c.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim = %v, %v; want acquired despite the failed purge", c.Status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "opportunistic purge failed") || !strings.Contains(logs.String(), "permission denied") {
		t.Errorf("log: %q, want the purge's failure", logs.String())
	}
	if strings.Contains(logs.String(), pass) {
		t.Error("the log shows the password")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
