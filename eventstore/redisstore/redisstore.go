package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultPrefix starts every key the store writes, unless WithPrefix
	// says otherwise: the key of an event is the prefix and its id, with
	// ':' and '%' in the id escaped (see ClaimStore.Key).
	DefaultPrefix = "payments:webhook-event:"
	// DefaultLease is how long a claim lasts, unless renewed, before
	// another delivery may take the event over (WithLease):
	// webhook.DefaultLease. The handler renews it every third of the lease
	// while the function runs, so a dead replica's claim lapses within one
	// lease of its last renewal.
	DefaultLease = webhook.DefaultLease
	// DefaultTimeout bounds each command the store sends (WithTimeout),
	// whatever the client's own timeouts and retries.
	DefaultTimeout = webhook.DefaultClaimStoreTimeout
	// DefaultRetention is how long a processed event id is remembered
	// (WithRetention).
	DefaultRetention = 7 * 24 * time.Hour
	// MinRetention is the shortest retention NewClaimStore accepts: twice
	// webhook.DefaultSignatureTolerance. A delivery signed at t verifies
	// until t+tolerance on a receiver whose clock is up to tolerance behind,
	// so an id forgotten earlier could be replayed.
	MinRetention = 2 * webhook.DefaultSignatureTolerance
	// maxPrefix keeps keys short.
	maxPrefix = 256
)

// ErrInvalidOption matches every error NewClaimStore returns for a bad option.
var ErrInvalidOption = errors.New("invalid claim store option")

// Option configures a ClaimStore or an OutcomeStore: WithPrefix, WithRetention
// and WithTimeout apply to both (with each store's defaults); WithLease to
// a ClaimStore only (NewOutcomeStore refuses it).
type Option func(*options)

type options struct {
	prefix    string
	lease     time.Duration
	retention time.Duration
	timeout   time.Duration
	leaseSet  bool // WithLease was given: a ClaimStore's option only
}

// WithPrefix sets the prefix of the store's keys (not empty, at most 256
// bytes). A ClaimStore's default is DefaultPrefix, an OutcomeStore's
// DefaultOutcomePrefix: give the two stores prefixes that do not start one
// another. Either store works on Redis Cluster with any prefix: each of its
// commands and scripts touches one key.
//
// A ClaimStore: give each receiver that must not share processed ids its own
// prefix: two stores with different prefixes never share a key, whatever
// the ids (TestPrefixesDoNotShareEvents). A prefix that ends with ':' and
// holds no '%' starts the keys as it is; any other is escaped and followed
// by "%:" (WithPrefix("tenant1") writes "tenant1%:<id>"). An OutcomeStore
// uses its prefix as it is.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithLease sets how long a claim lasts unless renewed (default
// DefaultLease; at least 1ms, in whole milliseconds, shorter than the
// retention). The handler renews it every third of the lease while the
// function runs, and cancels the function's context when it cannot. Keep
// it well under the time the service keeps retrying (a third of it, as
// the default does for the sandbox's 15 seconds), so that the claim of a
// replica that died lapses while the service still retries. A ClaimStore's
// option only.
func WithLease(d time.Duration) Option { return func(o *options) { o.lease = d; o.leaseSet = true } }

// WithTimeout sets the deadline of each command the store sends (default
// DefaultTimeout; positive). The store returns by then whatever the client
// does: go-redis, by default, ignores a context's deadline while it waits
// for a reply, waits ReadTimeout (3s), and retries a timed-out command
// MaxRetries (3) times; the store's deadline also ends those retries. With
// such a client each command runs in a goroutine the store can stop waiting
// for; a *redis.Client or *redis.ClusterClient whose options set
// ContextTimeoutEnabled keeps the deadline itself and saves that goroutine
// (set it on the options redis.ParseURL returns). A shorter deadline of the
// caller's context wins. Claim, Renew, Complete and Release on a frozen
// Redis (SIGSTOP) return an error by the deadline, and the handler answers
// a delivery 503, on either client (TestFrozenRedis, TestHungStore).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithRetention sets how long a ClaimStore remembers a processed event id
// (default DefaultRetention, at least MinRetention; keep it longer than the
// service's whole retry schedule), or how long an OutcomeStore keeps an
// outcome after its last change (default DefaultOutcomeRetention, at least
// a day).
func WithRetention(d time.Duration) Option { return func(o *options) { o.retention = d } }

// ClaimStore is a webhook.ClaimStore in Redis, shared by every replica of a
// webhook receiver. Each event is one key: "processing:<token>" with the
// lease as its TTL while claimed, "done:<token>" with the retention as its
// TTL once processed. Make it with NewClaimStore; it is safe for concurrent use. On
// a client with ContextTimeoutEnabled it starts no goroutine; on one
// without, the goroutines that run its commands end after 30 s idle.
type ClaimStore struct {
	client    redis.UniversalClient
	opts      options
	keyPrefix string   // keyPrefix(opts.prefix)
	calls     *bounder // every command goes through it
	// claims: how Claim asks Redis (claimsUnknown until the server's
	// version is known).
	claims atomic.Int32
}

var _ webhook.ClaimStore = (*ClaimStore)(nil)

// NewClaimStore returns a store on client (a *redis.Client, *redis.ClusterClient or a
// sentinel-backed failover client). Its errors for bad options match
// ErrInvalidOption.
func NewClaimStore(client redis.UniversalClient, opts ...Option) (*ClaimStore, error) {
	if client == nil {
		return nil, invalid("NewClaimStore needs a client")
	}
	o := options{prefix: DefaultPrefix, lease: DefaultLease, retention: DefaultRetention, timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.prefix == "" || len(o.prefix) > maxPrefix {
		return nil, invalid("the key prefix must be 1 to %d bytes, got %d", maxPrefix, len(o.prefix))
	}
	if err := checkLease(o.lease, o.retention, o.timeout); err != nil {
		return nil, err
	}
	return &ClaimStore{client: client, opts: o, keyPrefix: keyPrefix(o.prefix), calls: newBounder(client, o.timeout)}, nil
}

// keepsDeadlines says whether client stops waiting for a reply at its
// context's deadline (Options.ContextTimeoutEnabled), for the clients whose
// options can be read.
func keepsDeadlines(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

const (
	processing = "processing:"
	done       = "done:"
)

// completeScript rewrites the claim into a completion while the token
// still owns the key, or writes the completion when the key is gone (the
// claim lapsed and nobody took it over); a completion by the same token is
// success.
//
// ARGV[1] "processing:<token>"; ARGV[2] "done:<token>"; ARGV[3] retention ms.
var completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == false then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
if v == ARGV[2] then
  return 1
end
return 0
`)

// renewScript extends the claim's TTL while the token still owns the key:
// 1; 2 when the token completed it; 0 otherwise.
//
// ARGV[1] "processing:<token>"; ARGV[2] "done:<token>"; ARGV[3] lease ms.
var renewScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
if v == ARGV[2] then
  return 2
end
return 0
`)

// releaseScript deletes the claim while the token still owns the key.
//
// ARGV[1] "processing:<token>".
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// run calls call under the store's deadline (bounder). A call that fails
// to connect (Redis restarting) is tried again until the deadline
// (redial): it sent nothing.
func (s *ClaimStore) run(ctx context.Context, call func(context.Context) (any, error)) (any, error) {
	return s.calls.call(ctx, func(ctx context.Context) (any, error) { return redial(ctx, call) })
}

// script runs script on the event's key under the store's deadline (run).
func (s *ClaimStore) script(ctx context.Context, script *redis.Script, id string, args ...any) (any, error) {
	keys := []string{s.Key(id)}
	return s.run(ctx, func(ctx context.Context) (any, error) {
		return script.Run(ctx, s.client, keys, args...).Result()
	})
}

// Claim implements webhook.ClaimStore. The lease is a TTL kept by Redis,
// so replicas' clocks do not matter.
func (s *ClaimStore) Claim(ctx context.Context, eventID string) (webhook.Claim, error) {
	if eventID == "" {
		return webhook.Claim{}, errors.New("redisstore: claim of an empty event id")
	}
	token, err := newToken()
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("redisstore: %w", err)
	}
	start := time.Now()
	key, value := s.Key(eventID), processing+token
	res, err := s.run(ctx, func(ctx context.Context) (any, error) { return s.claim(ctx, key, value) })
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("redisstore: claim event %q: %w", eventID, err)
	}
	c := webhook.Claim{EventID: eventID}
	switch v := res.(type) {
	case int64:
		c.Status, c.Token, c.LeaseExpires = webhook.ClaimAcquired, token, leaseExpiry(start, s.opts.lease)
	case string:
		switch {
		case v == value:
			// Its own claim: go-redis sent the command again after the
			// reply to the first was lost.
			c.Status, c.Token, c.LeaseExpires = webhook.ClaimAcquired, token, leaseExpiry(start, s.opts.lease)
		case strings.HasPrefix(v, done):
			c.Status = webhook.ClaimDone
		default:
			c.Status = webhook.ClaimInProgress
		}
	default:
		return webhook.Claim{}, fmt.Errorf("redisstore: claim event %q: unexpected reply %T", eventID, res)
	}
	return c, nil
}

// Renew implements webhook.ClaimStore: it extends the claim's TTL while the claim
// still owns the key. A claim its own token completed is returned
// unchanged; any other, a lapsed one included (Redis has forgotten it), gets
// webhook.ErrClaimLost.
func (s *ClaimStore) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	if c.Token == "" {
		return c, fmt.Errorf("redisstore: renew event %q: %w", c.EventID, webhook.ErrClaimLost)
	}
	start := time.Now()
	res, err := s.script(ctx, renewScript, c.EventID, processing+c.Token, done+c.Token, s.opts.lease.Milliseconds())
	if err != nil {
		return c, fmt.Errorf("redisstore: renew event %q: %w", c.EventID, err)
	}
	switch res {
	case int64(1):
		c.LeaseExpires = leaseExpiry(start, s.opts.lease)
		return c, nil
	case int64(2):
		return c, nil
	}
	return c, fmt.Errorf("redisstore: renew event %q: %w", c.EventID, webhook.ErrClaimLost)
}

// Complete implements webhook.ClaimStore: the claim becomes a completion
// remembered for the retention, also when its lease lapsed and nobody took
// the event over (the key is gone), unless another claim holds the key or
// completed it (webhook.ErrClaimLost).
func (s *ClaimStore) Complete(ctx context.Context, c webhook.Claim) error {
	return s.settle(ctx, "complete", completeScript, c, processing+c.Token, done+c.Token, s.opts.retention.Milliseconds())
}

// Release implements webhook.ClaimStore: it deletes the claim while the
// claim still owns the key, and returns webhook.ErrClaimLost otherwise.
func (s *ClaimStore) Release(ctx context.Context, c webhook.Claim) error {
	return s.settle(ctx, "release", releaseScript, c, processing+c.Token)
}

func (s *ClaimStore) settle(ctx context.Context, op string, script *redis.Script, c webhook.Claim, args ...any) error {
	if c.Token == "" {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, webhook.ErrClaimLost)
	}
	res, err := s.script(ctx, script, c.EventID, args...)
	if err != nil {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, err)
	}
	if n, ok := res.(int64); !ok || n == 0 {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, webhook.ErrClaimLost)
	}
	return nil
}
