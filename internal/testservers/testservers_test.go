package testservers_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/internal/testservers"
)

func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

// The servers answer, survive a stop and a start with their data, and
// their URLs are printed without the password.
func TestPostgresStopStart(t *testing.T) {
	p := testservers.StartPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query := func(sql string) error {
		c, err := pgx.Connect(ctx, p.URL())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := query("CREATE TABLE kept (id int)"); err != nil {
		t.Fatal(err)
	}
	p.Stop(t)
	if err := query("SELECT 1"); err == nil {
		t.Fatal("a stopped server answered")
	}
	p.Start(t)
	if err := query("SELECT * FROM kept"); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if p.Password() == "" || strings.Contains(p.Redacted(), p.Password()) {
		t.Fatalf("Redacted() = %q shows the password", p.Redacted())
	}
}

func TestRedisStopStartPersistent(t *testing.T) {
	r := testservers.StartRedis(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts, err := redis.ParseURL(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1
	c := redis.NewClient(opts)
	defer c.Close()
	if err := c.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r.Stop(t)
	if err := c.Get(ctx, "kept").Err(); err == nil {
		t.Fatal("a stopped server answered")
	}
	r.Start(t)
	if v, err := c.Get(ctx, "kept").Result(); err != nil || v != "1" {
		t.Fatalf("after a restart: %q, %v", v, err)
	}
	if r.Password() == "" || strings.Contains(r.Redacted(), r.Password()) {
		t.Fatalf("Redacted() = %q shows the password", r.Redacted())
	}
}

func TestSharedServersAreShared(t *testing.T) {
	pg1, pg2 := testservers.SharedPostgres(t), testservers.SharedPostgres(t)
	if pg1 != pg2 && os.Getenv(testservers.EnvPostgresURL) == "" {
		t.Error("two shared PostgreSQL servers")
	}
	r1, r2 := testservers.SharedRedis(t), testservers.SharedRedis(t)
	if r1 != r2 && os.Getenv(testservers.EnvRedisURL) == "" {
		t.Error("two shared Redis servers")
	}
	if pg1.URL() != pg2.URL() || r1.URL() != r2.URL() {
		t.Error("the shared servers' URLs differ between calls")
	}
}
