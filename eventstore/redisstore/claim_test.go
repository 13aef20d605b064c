package redisstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/internal/storetest"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// recorder is a go-redis hook that records the name of every command a
// client sends, and may answer some itself (fake) as another server would.
type recorder struct {
	mu    sync.Mutex
	names map[string]int
	fake  func(cmd redis.Cmder) bool // true: answered, not sent
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		if r.names == nil {
			r.names = map[string]int{}
		}
		r.names[cmd.Name()]++
		r.mu.Unlock()
		if r.fake != nil && r.fake(cmd) {
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

// count returns how many commands named name were sent, and forgets them.
func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.names[name]
	delete(r.names, name)
	return n
}

// recordedStore returns a store on a client of the shared server whose
// commands rec records, under a fresh prefix, with a 30 s lease.
func recordedStore(t *testing.T, rec *recorder) (*redisstore.ClaimStore, *redis.Client) {
	t.Helper()
	c := sharedClient(t)
	c.AddHook(rec)
	s, err := redisstore.NewClaimStore(c, redisstore.WithPrefix(uniquePrefix(t, c)), redisstore.WithLease(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// checkClaims claims a new event, claims it again (in progress), completes
// it and claims it once more (done), and checks what Redis holds.
func checkClaims(t *testing.T, s *redisstore.ClaimStore, c *redis.Client) {
	t.Helper()
	ctx := testCtx(t)
	first, err := s.Claim(ctx, "evt_1")
	if err != nil || first.Status != webhook.ClaimAcquired || first.Token == "" {
		t.Fatalf("first Claim = %+v, %v; want acquired", first, err)
	}
	if v := c.Get(ctx, s.Key("evt_1")).Val(); v != "processing:"+first.Token {
		t.Errorf("value after the claim %q, want processing:<token>", v)
	}
	if ttl := c.PTTL(ctx, s.Key("evt_1")).Val(); ttl > 30*time.Second || ttl < 20*time.Second {
		t.Errorf("TTL after the claim %v, want the lease (30 s)", ttl)
	}
	if again, err := s.Claim(ctx, "evt_1"); err != nil || again.Status != webhook.ClaimInProgress || again.Token != "" {
		t.Errorf("Claim of a claimed event = %+v, %v; want in progress", again, err)
	}
	if v := c.Get(ctx, s.Key("evt_1")).Val(); v != "processing:"+first.Token {
		t.Errorf("a second Claim changed the value to %q", v)
	}
	if err := s.Complete(ctx, first); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Claim(ctx, "evt_1"); err != nil || again.Status != webhook.ClaimDone {
		t.Errorf("Claim of a completed event = %+v, %v; want done", again, err)
	}
	if ttl := c.PTTL(ctx, s.Key("evt_1")).Val(); ttl < 24*time.Hour {
		t.Errorf("a Claim of a completed event changed its TTL to %v", ttl)
	}
}

// On Redis 7 (the test server), a claim is one SET ... NX PX ... GET; the
// server's version is read once (INFO server), by the first Claim, however
// many Claims start together.
func TestClaimIsOneNativeCommandOnRedis7(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s, c := recordedStore(t, rec)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cl, err := s.Claim(ctx, "together-"+string(rune('a'+i))); err != nil || cl.Status != webhook.ClaimAcquired {
				t.Errorf("Claim = %v, %v", cl.Status, err)
			}
		}()
	}
	wg.Wait()
	if n := rec.count("info"); n != 1 {
		t.Fatalf("INFO sent %d times by 32 concurrent first Claims, want 1", n)
	}
	if !redisstore.ClaimsNative(s) {
		t.Fatal("the store does not claim natively on the test server (Redis 7)")
	}
	rec.count("set")
	rec.count("evalsha")
	rec.count("eval")
	checkClaims(t, s, c)
	if n := rec.count("set"); n != 3 {
		t.Errorf("%d SET commands for 3 Claims, want 3", n)
	}
	// A script is sent as EVALSHA, then as EVAL when the server does not
	// know it (another test flushes the shared server's scripts).
	if n := rec.count("evalsha"); n != 1 {
		t.Errorf("%d scripts for 3 Claims and a Complete, want 1 (the Complete)", n)
	}
	if n := rec.count("info"); n != 0 {
		t.Errorf("INFO sent %d more times", n)
	}
}

// The script that older servers run claims as the native command does.
func TestClaimScriptForOlderServers(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s, c := recordedStore(t, rec)
	redisstore.ForceScriptClaims(s)
	checkClaims(t, s, c)
	if n := rec.count("set") + rec.count("info"); n != 0 {
		t.Errorf("%d SET or INFO commands on the script path, want 0", n)
	}
	if n := rec.count("evalsha"); n != 4 {
		t.Errorf("%d scripts for 3 Claims and a Complete, want 4", n)
	}
}

// redisError is a reply of an error, as go-redis gives it.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// A server whose INFO says 6.2 gets the script; one that says 7.x but
// refuses SET with NX and GET (a node not yet upgraded) turns the store to
// the script from then on.
func TestClaimOnOlderServers(t *testing.T) {
	t.Parallel()
	t.Run("INFO says 6.2", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{fake: func(cmd redis.Cmder) bool {
			if info, ok := cmd.(*redis.StringCmd); ok && cmd.Name() == "info" {
				info.SetVal("# Server\r\nredis_version:6.2.14\r\nredis_mode:standalone\r\n")
				return true
			}
			return false
		}}
		s, c := recordedStore(t, rec)
		checkClaims(t, s, c)
		if n := rec.count("set"); n != 0 {
			t.Errorf("%d SET commands to a 6.2 server, want 0", n)
		}
		if n := rec.count("info"); n != 1 {
			t.Errorf("INFO sent %d times, want 1", n)
		}
	})
	t.Run("SET NX GET refused", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{fake: func(cmd redis.Cmder) bool {
			if cmd.Name() == "set" && strings.EqualFold(args(cmd)[len(cmd.Args())-1], "GET") {
				cmd.SetErr(redisError("ERR syntax error"))
				return true
			}
			return false
		}}
		s, c := recordedStore(t, rec)
		checkClaims(t, s, c)
		if n := rec.count("set"); n != 1 {
			t.Errorf("%d SET commands, want 1 (refused, then the script)", n)
		}
	})
}

func args(cmd redis.Cmder) []string {
	out := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		s, _ := a.(string)
		out[i] = s
	}
	return out
}

func TestServerMajor(t *testing.T) {
	for info, want := range map[string]int{
		"# Server\r\nredis_version:7.2.4\r\nredis_git_sha1:00000000\r\n": 7,
		"redis_version:6.2.14\r\n":                                       6,
		"# Server\nredis_version:10.0.0\n":                               10,
		"# Server\r\nredis_version:\r\n":                                 -1,
		"# Server\r\nredis_mode:standalone\r\n":                          -1,
	} {
		got, ok := redisstore.ServerMajor(info)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("serverMajor(%q) = %d, want %d", info, got, want)
		}
	}
}

// The whole conformance suite on the script path, as older servers run it.
func TestConformanceScriptClaims(t *testing.T) {
	storetest.Conformance(t, storetest.Backend{
		Stores: func(tb testing.TB, n int, lease time.Duration) storetest.Fixture {
			f := fixture(tb, testservers.SharedRedis(tb).URL(), n, lease, 8)
			for _, s := range f.Stores {
				redisstore.ForceScriptClaims(s.(*redisstore.ClaimStore))
			}
			return f
		},
	})
}
