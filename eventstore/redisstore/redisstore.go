package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/internal/lease"
	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultPrefix starts every key the store writes, unless WithPrefix
	// says otherwise: the key of an event is the prefix and its id.
	DefaultPrefix = "payments:webhook-event:"
	// DefaultLease is how long a claim lasts before another delivery may
	// take the event over (WithLease): shorter than the service's first
	// retry back-off, so that a dead replica's claim has lapsed by the
	// time the event is delivered again.
	DefaultLease = lease.DefaultLease
	// DefaultRetention is how long a processed event id is remembered
	// (WithRetention).
	DefaultRetention = lease.DefaultRetention
	// MinRetention is the shortest retention New accepts: twice
	// webhook.DefaultSignatureTolerance.
	MinRetention = lease.MinRetention
	// maxPrefix keeps keys short.
	maxPrefix = 256
)

// ErrInvalidOption matches every error New returns for a bad option.
var ErrInvalidOption = lease.ErrInvalidOption

// Option configures a Store.
type Option func(*options)

type options struct {
	prefix    string
	lease     time.Duration
	retention time.Duration
}

// WithPrefix sets the prefix of the store's keys (default DefaultPrefix;
// not empty, at most 256 bytes). Give each receiver that must not share
// processed ids its own prefix. Every operation touches the event's key
// only, so any prefix works on Redis Cluster.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithLease sets how long a claim lasts (default DefaultLease; at least
// 1ms, in whole milliseconds, shorter than the retention). The handler
// cancels the EventFunc's context when it runs out; choose it longer than
// your slowest processing and shorter than the service's first retry delay.
func WithLease(d time.Duration) Option { return func(o *options) { o.lease = d } }

// WithRetention sets how long a processed event id is remembered (default
// DefaultRetention, at least MinRetention). Keep it longer than the
// service's whole retry schedule.
func WithRetention(d time.Duration) Option { return func(o *options) { o.retention = d } }

// Store is a webhook.Store in Redis, shared by every replica of a
// webhook receiver. Each event is one key: "processing:<token>" with the
// lease as its TTL while claimed, "done:<token>" with the retention as its
// TTL once processed. Make it with New; it is safe for concurrent use and
// starts no goroutine.
type Store struct {
	client redis.UniversalClient
	opts   options
}

var _ webhook.Store = (*Store)(nil)

// New returns a store on client (a *redis.Client, *redis.ClusterClient or a
// sentinel-backed failover client). Its errors for bad options match
// ErrInvalidOption.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, lease.Invalid("redisstore", "New needs a client")
	}
	o := options{prefix: DefaultPrefix, lease: DefaultLease, retention: DefaultRetention}
	for _, opt := range opts {
		opt(&o)
	}
	if o.prefix == "" || len(o.prefix) > maxPrefix {
		return nil, lease.Invalid("redisstore", "the key prefix must be 1 to %d bytes, got %d", maxPrefix, len(o.prefix))
	}
	if err := lease.Check("redisstore", o.lease, o.retention); err != nil {
		return nil, err
	}
	return &Store{client: client, opts: o}, nil
}

// Key returns the key that holds eventID's claim or completion.
func (s *Store) Key(eventID string) string { return s.opts.prefix + eventID }

const (
	processing = "processing:"
	done       = "done:"
)

// claimScript: SET NX PX takes a free id; when the key exists, its value
// says whether the event is claimed or done. Atomic, so the two cannot
// disagree.
//
// KEYS[1] the event's key; ARGV[1] "processing:<token>"; ARGV[2] lease ms.
var claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return redis.call('GET', KEYS[1])
`)

// completeScript rewrites the claim into a completion while the token
// still owns the key; a completion by the same token is success.
//
// ARGV[1] "processing:<token>"; ARGV[2] "done:<token>"; ARGV[3] retention ms.
var completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
if v == ARGV[2] then
  return 1
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

// Claim implements webhook.Store. The lease is a TTL kept by Redis,
// so replicas' clocks do not matter.
func (s *Store) Claim(ctx context.Context, eventID string) (webhook.Claim, error) {
	if eventID == "" {
		return webhook.Claim{}, errors.New("redisstore: claim of an empty event id")
	}
	token, err := lease.NewToken()
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("redisstore: %w", err)
	}
	start := time.Now()
	res, err := claimScript.Run(ctx, s.client, []string{s.Key(eventID)}, processing+token, s.opts.lease.Milliseconds()).Result()
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("redisstore: claim event %q: %w", eventID, err)
	}
	c := webhook.Claim{EventID: eventID}
	switch v := res.(type) {
	case int64:
		c.Status, c.Token, c.LeaseExpires = webhook.ClaimAcquired, token, lease.Expiry(start, s.opts.lease)
	case string:
		c.Status = webhook.ClaimInProgress
		if strings.HasPrefix(v, done) {
			c.Status = webhook.ClaimDone
		}
	default:
		return webhook.Claim{}, fmt.Errorf("redisstore: claim event %q: unexpected reply %T", eventID, res)
	}
	return c, nil
}

// Complete implements webhook.Store: the claim becomes a completion
// remembered for the retention, unless another claim took the key over
// (webhook.ErrClaimLost).
func (s *Store) Complete(ctx context.Context, c webhook.Claim) error {
	return s.settle(ctx, "complete", completeScript, c, processing+c.Token, done+c.Token, s.opts.retention.Milliseconds())
}

// Release implements webhook.Store: it deletes the claim while the
// claim still owns the key, and returns webhook.ErrClaimLost otherwise.
func (s *Store) Release(ctx context.Context, c webhook.Claim) error {
	return s.settle(ctx, "release", releaseScript, c, processing+c.Token)
}

func (s *Store) settle(ctx context.Context, op string, script *redis.Script, c webhook.Claim, args ...any) error {
	if c.Token == "" {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, webhook.ErrClaimLost)
	}
	n, err := script.Run(ctx, s.client, []string{s.Key(c.EventID)}, args...).Int64()
	if err != nil {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, err)
	}
	if n == 0 {
		return fmt.Errorf("redisstore: %s event %q: %w", op, c.EventID, webhook.ErrClaimLost)
	}
	return nil
}
