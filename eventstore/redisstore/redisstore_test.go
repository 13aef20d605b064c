package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/webhook"
)

func TestNewRejectsInvalidOptions(t *testing.T) {
	// A client connects lazily: no server is needed to build one.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for name, opts := range map[string][]redisstore.Option{
		"empty prefix":         {redisstore.WithPrefix("")},
		"long prefix":          {redisstore.WithPrefix(strings.Repeat("p", 257))},
		"zero lease":           {redisstore.WithLease(0)},
		"negative lease":       {redisstore.WithLease(-time.Second)},
		"sub-ms lease":         {redisstore.WithLease(1500 * time.Microsecond)},
		"lease over retention": {redisstore.WithLease(time.Hour), redisstore.WithRetention(time.Hour)},
		"short retention":      {redisstore.WithRetention(2*webhook.DefaultSignatureTolerance - time.Second)},
	} {
		s, err := redisstore.NewClaimStore(c, opts...)
		if !errors.Is(err, redisstore.ErrInvalidOption) || s != nil {
			t.Errorf("%s: NewClaimStore = %v, %v; want ErrInvalidOption", name, s, err)
		}
	}
	if _, err := redisstore.NewClaimStore(nil); !errors.Is(err, redisstore.ErrInvalidOption) {
		t.Errorf("NewClaimStore(nil) = %v, want ErrInvalidOption", err)
	}
	s, err := redisstore.NewClaimStore(c, redisstore.WithLease(time.Millisecond), redisstore.WithRetention(redisstore.MinRetention))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Key("evt_1"); k != redisstore.DefaultPrefix+"evt_1" {
		t.Errorf("Key = %q", k)
	}
}

// What the store writes is readable by an operator: the state and the token,
// with the lease or the retention as the key's TTL.
func TestKeyValues(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	ctx := testCtx(t)
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(t, c)), redisstore.WithLease(30*time.Second), redisstore.WithRetention(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	claim, err := s.Claim(ctx, "evt_1")
	if err != nil || claim.Status != webhook.ClaimAcquired {
		t.Fatalf("Claim = %v, %v", claim.Status, err)
	}
	check := func(wantValue string, wantTTL time.Duration) {
		t.Helper()
		v, err := c.Get(ctx, s.Key("evt_1")).Result()
		if err != nil || v != wantValue {
			t.Errorf("value %q, %v; want %q", v, err, wantValue)
		}
		if ttl := c.PTTL(ctx, s.Key("evt_1")).Val(); ttl > wantTTL || ttl < wantTTL-time.Second {
			t.Errorf("TTL %v, want %v", ttl, wantTTL)
		}
	}
	check("processing:"+claim.Token, 30*time.Second)
	if err := s.Complete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	check("done:"+claim.Token, time.Hour)
}

// The scripts are loaded on first use and after the server forgot them
// (a restart, SCRIPT FLUSH): EVALSHA falls back to EVAL.
func TestScriptsSurviveScriptFlush(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	ctx := testCtx(t)
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"a", "b"} {
		if i == 1 {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		claim, err := s.Claim(ctx, id)
		if err != nil || claim.Status != webhook.ClaimAcquired {
			t.Fatalf("Claim = %v, %v", claim.Status, err)
		}
		if err := s.Complete(ctx, claim); err != nil {
			t.Fatal(err)
		}
	}
}
