package redisstore_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// unescape undoes the escaping of keys.go, and fails on anything else.
func unescape(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ':':
			t.Fatalf("%q: an escaped part holds ':'", s)
		case s[i] != '%':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
			i += 2
		case strings.HasPrefix(s[i:], "%3A"):
			b.WriteByte(':')
			i += 2
		default:
			t.Fatalf("%q: a bare %% at %d", s, i)
		}
	}
	return b.String()
}

// decodeKey reads the prefix and the event id back from a key, as the
// package documentation says they can be.
func decodeKey(t *testing.T, key string) (prefix, id string) {
	t.Helper()
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		t.Fatalf("key %q holds no ':'", key)
	}
	kp, id := key[:i+1], unescape(t, key[i+1:])
	if !strings.Contains(kp, "%") {
		return kp, id
	}
	if !strings.HasSuffix(kp, "%:") {
		t.Fatalf("key %q: an escaped prefix that does not end with %%:", key)
	}
	return unescape(t, strings.TrimSuffix(kp, "%:")), id
}

// No two (prefix, id) pairs share a key: each key reads back as the pair
// that made it, among pairs chosen to meet at the boundary. Before keys were
// escaped, "tenant1" + "0evt_1" and "tenant10" + "evt_1" were one key.
func TestKeysDoNotCollide(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	prefixes := []string{"tenant1", "tenant10", "tenant1:", "tenant1%:", "tenant1%", "a:", "a:b:", "a:b", "a%3A", "a%3A%:",
		"%", ":", "%:", "x%25:", "x%:", redisstore.DefaultPrefix, "payments:", "payments:webhook-event"}
	ids := []string{"evt_1", "0evt_1", "b:c", "c", ":", "%", "%3A", "%25", "%:", "b%3Ac", "webhook-event:evt_1",
		"x\x00y", "0", "1evt_1", ":evt_1"}
	seen := map[string][2]string{}
	for _, p := range prefixes {
		s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(p))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			key := s.Key(id)
			if gp, gid := decodeKey(t, key); gp != p || gid != id {
				t.Errorf("Key(%q, %q) = %q, reads back as (%q, %q)", p, id, key, gp, gid)
			}
			if other, dup := seen[key]; dup {
				t.Errorf("(%q, %q) and (%q, %q) share the key %q", p, id, other[0], other[1], key)
			}
			seen[key] = [2]string{p, id}
		}
	}
}

// Keys of the default prefix, and of any prefix that ends with ':' and
// holds no '%', are what they were before ids were escaped for ids without
// ':' or '%': an event completed before an upgrade is still done after it.
func TestKeysOfTheDefaultPrefixUnchanged(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	ctx := testCtx(t)
	prefix := uniquePrefix(t, c) // "test:<hex>:"
	for _, p := range []string{redisstore.DefaultPrefix, prefix} {
		s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(p))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"evt_1", "3f0c2a9e-1b7d-4c52-9a43-0d6f1e2b7c88"} {
			if got := s.Key(id); got != p+id {
				t.Errorf("Key(%q) with prefix %q = %q, want %q", id, p, got, p+id)
			}
		}
	}
	// A completion written by the previous layout is found done.
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, prefix+"evt_old", "done:0123456789abcdef0123456789abcdef", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if claim, err := s.Claim(ctx, "evt_old"); err != nil || claim.Status != webhook.ClaimDone {
		t.Fatalf("Claim of an event completed under the previous layout = %v, %v; want ClaimDone", claim.Status, err)
	}
}

// Two receivers whose prefixes differ never see each other's events, even
// when one prefix and id run into the other's. This failed before keys were
// escaped: the claim of "evt_1" under "tenant10" found the completion of
// "0evt_1" under "tenant1" and answered ClaimDone for an event never seen.
func TestPrefixesDoNotShareEvents(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	ctx := testCtx(t)
	base := uniquePrefix(t, c)
	pairs := [][4]string{
		{base + "tenant1", "0evt_1", base + "tenant10", "evt_1"},
		{base + "a:", "b:c", base + "a:b:", "c"},
		{base + "t", "%:x", base + "t%:", "x"},
	}
	for _, p := range pairs {
		first, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(p[0]))
		if err != nil {
			t.Fatal(err)
		}
		second, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(p[2]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Del(ctx, first.Key(p[1]), second.Key(p[3])) })
		claim, err := first.Claim(ctx, p[1])
		if err != nil || claim.Status != webhook.ClaimAcquired {
			t.Fatalf("Claim(%q, %q) = %v, %v", p[0], p[1], claim.Status, err)
		}
		if err := first.Complete(ctx, claim); err != nil {
			t.Fatal(err)
		}
		if got, err := second.Claim(ctx, p[3]); err != nil || got.Status != webhook.ClaimAcquired {
			t.Errorf("Claim(%q, %q) after (%q, %q) completed = %v, %v; want ClaimAcquired (an event never seen)",
				p[2], p[3], p[0], p[1], got.Status, err)
		}
	}
}
