package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/internal/testservers"
)

// The throwaway servers of internal/testservers, checked with this module's
// driver (the root module requires no driver).
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
