package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/outcome"
)

const (
	// DefaultOutcomePrefix starts every key an OutcomeStore writes, unless
	// WithPrefix says otherwise.
	DefaultOutcomePrefix = "payments:outcome:"
	// DefaultOutcomeRetention is how long an outcome is kept after its last
	// change (WithRetention).
	DefaultOutcomeRetention = 90 * 24 * time.Hour
)

// OutcomeStore is an outcome.Store in Redis, shared by every replica: the
// outcome tracker's keys beside the claim store's, on the same client. Make
// it with NewOutcomeStore; it needs no migration. It is safe for
// concurrent use.
//
// Keys, under the prefix: "id:<id>", a hash of the outcome as JSON and its
// version; "ref:<reference>", the set of payment ids with a reference; and "open", a
// set of the ids that are not final, which Open reads. An update reads the
// hash (HMGET: no write), decides, and writes only when the event changes the
// outcome, with a script that sets the hash only if its version is still
// the one read; when another replica wrote in between, it reads again and
// decides again. So a duplicate costs one read and no write. Each script
// touches one key, so every prefix works on Redis Cluster. The writes go in
// one pipeline: the reference and the open set before the hash, and an id
// leaves the open set after its final write, so a replica that dies in
// between leaves at most an entry that Open and Load check against the
// hash. Tests: TestOutcomeStoreNoWriteForDuplicate (the commands sent),
// TestOutcomeStoreConformance, TestOutcomeStoreReplicas.
//
// Every command is bounded by the store's timeout (WithTimeout), as
// ClaimStore's are: on a client with ContextTimeoutEnabled it is sent from the
// caller's goroutine (TestOutcomeStoreCommandsOnTheCallersGoroutine); on
// one without, which ignores its context's deadline while it reads, it runs
// on one of the goroutines the store keeps for that (they end after 30 s
// idle), and the caller stops waiting at the deadline.
type OutcomeStore struct {
	client    redis.UniversalClient
	prefix    string
	retention time.Duration
	timeout   time.Duration
	calls     *bounder // every command goes through it
}

// NewOutcomeStore returns an outcome store on client, configured by
// WithPrefix (default DefaultOutcomePrefix), WithRetention (default
// DefaultOutcomeRetention) and WithTimeout; WithLease, a ClaimStore's option, is
// refused. Its errors match ErrInvalidOption.
func NewOutcomeStore(client redis.UniversalClient, opts ...Option) (*OutcomeStore, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: NewOutcomeStore with a nil client", ErrInvalidOption)
	}
	o := options{prefix: DefaultOutcomePrefix, retention: DefaultOutcomeRetention, timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.leaseSet {
		return nil, fmt.Errorf("%w: WithLease configures a claim store (NewClaimStore), not an outcome store", ErrInvalidOption)
	}
	s := &OutcomeStore{client: client, prefix: o.prefix, retention: o.retention, timeout: o.timeout}
	switch {
	case s.prefix == "" || len(s.prefix) > maxPrefix:
		return nil, fmt.Errorf("%w: outcome prefix: 1 to %d bytes", ErrInvalidOption, maxPrefix)
	case s.retention < 24*time.Hour:
		return nil, fmt.Errorf("%w: outcome retention %v: at least a day", ErrInvalidOption, s.retention)
	case s.timeout <= 0:
		return nil, fmt.Errorf("%w: outcome timeout %v: must be positive", ErrInvalidOption, s.timeout)
	}
	s.calls = newBounder(client, s.timeout)
	return s, nil
}

// casScript sets the outcome hash KEYS[1] to version ARGV[2] and record
// ARGV[3], with a TTL of ARGV[4] ms, only if its version is ARGV[1] ("0":
// absent).
var casScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)

func (s *OutcomeStore) idKey(id string) string   { return s.prefix + "id:" + id }
func (s *OutcomeStore) refKey(ref string) string { return s.prefix + "ref:" + ref }
func (s *OutcomeStore) openKey() string          { return s.prefix + "open" }
func (s *OutcomeStore) channel() string          { return s.prefix + "changed" }

// bounded runs f under the store's deadline (bounder), and returns by it
// even when the client does not.
func (s *OutcomeStore) bounded(ctx context.Context, f func(ctx context.Context) error) error {
	_, err := s.calls.call(ctx, func(ctx context.Context) (any, error) { return nil, f(ctx) })
	return err
}

// Load returns the outcome of an id, or of a payment reference (as
// outcome.PickByReference picks among several payments with it).
func (s *OutcomeStore) Load(ctx context.Context, key string) (outcome.Outcome, error) {
	o, _, err := s.load(ctx, key)
	if !errors.Is(err, outcome.ErrNotFound) {
		return o, err
	}
	var ids []string
	err = s.bounded(ctx, func(ctx context.Context) error {
		var err error
		ids, err = s.client.SMembers(ctx, s.refKey(key)).Result()
		return err
	})
	if err != nil {
		return outcome.Outcome{}, fmt.Errorf("redisstore: loading outcome %s: %w", key, err)
	}
	var candidates []outcome.Outcome
	for _, id := range ids {
		c, _, err := s.load(ctx, id)
		switch {
		case errors.Is(err, outcome.ErrNotFound):
			continue // expired, or not written yet
		case err != nil:
			return outcome.Outcome{}, err
		}
		candidates = append(candidates, c)
	}
	if o, ok := outcome.PickByReference(candidates); ok {
		return o, nil
	}
	return outcome.Outcome{}, outcome.ErrNotFound
}

// load reads the outcome hash of id and its version (0 when absent).
func (s *OutcomeStore) load(ctx context.Context, id string) (outcome.Outcome, int64, error) {
	var vals []any
	err := s.bounded(ctx, func(ctx context.Context) error {
		var err error
		vals, err = s.client.HMGet(ctx, s.idKey(id), "v", "r").Result()
		return err
	})
	if err != nil {
		return outcome.Outcome{}, 0, fmt.Errorf("redisstore: loading outcome %s: %w", id, err)
	}
	vs, _ := vals[0].(string)
	rs, _ := vals[1].(string)
	if vs == "" || rs == "" {
		return outcome.Outcome{}, 0, outcome.ErrNotFound
	}
	version, err := strconv.ParseInt(vs, 10, 64)
	var o outcome.Outcome
	if err == nil {
		err = json.Unmarshal([]byte(rs), &o)
	}
	if err != nil {
		return outcome.Outcome{}, 0, fmt.Errorf("redisstore: outcome %s: the stored record does not decode: %w", id, err)
	}
	return o, version, nil
}

// maxUpdateRounds bounds the reads of one update that other writers keep
// overtaking.
const maxUpdateRounds = 100

// Update applies fn to the outcome of id: see OutcomeStore for how.
func (s *OutcomeStore) Update(ctx context.Context, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	for round := 0; round < maxUpdateRounds; round++ {
		cur, version, err := s.load(ctx, id)
		if errors.Is(err, outcome.ErrNotFound) {
			err = nil
		}
		if err != nil {
			return outcome.Outcome{}, err
		}
		next, write, err := fn(cur)
		if err != nil || !write {
			return cur, err
		}
		record, err := json.Marshal(next)
		if err != nil {
			return outcome.Outcome{}, fmt.Errorf("redisstore: outcome %s: %w", id, err)
		}
		// One round trip: the reference and the open set before the
		// hash, and, for a final outcome, the open set after it. That SREM
		// runs even when the script found another replica's write: then
		// this update reads again and writes a final state over whatever
		// open one that was (an open state always moves forward to a
		// final one), so the id leaves the set with good reason.
		var set int64
		err = s.bounded(ctx, func(ctx context.Context) error {
			pipe := s.client.Pipeline()
			if next.Reference != "" {
				pipe.SAdd(ctx, s.refKey(next.Reference), id)
				pipe.PExpire(ctx, s.refKey(next.Reference), s.retention)
			}
			if !next.State.Final() {
				pipe.SAdd(ctx, s.openKey(), id)
			}
			cas := casScript.Eval(ctx, pipe, []string{s.idKey(id)},
				strconv.FormatInt(version, 10), strconv.FormatInt(version+1, 10), record, s.retention.Milliseconds())
			if next.State.Final() {
				pipe.SRem(ctx, s.openKey(), id)
			}
			if next.State.Final() { // what Await waits for
				pipe.Publish(ctx, s.channel(), "") // a write that lost its race wakes waiters for nothing
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
			var err error
			set, err = cas.Int64()
			return err
		})
		if err != nil {
			return outcome.Outcome{}, fmt.Errorf("redisstore: recording outcome %s: %w", id, err)
		}
		if set == 1 {
			return next, nil
		}
		// Another replica wrote first: read its outcome and decide again.
	}
	return outcome.Outcome{}, fmt.Errorf("redisstore: recording outcome %s: overtaken by other writers %d times", id, maxUpdateRounds)
}

// Subscribe makes Await in any replica return as soon as an outcome is
// written: it subscribes to the prefix's channel ("<prefix>changed", which
// every write of a final outcome publishes to) for as long as some Await waits (see
// outcome.Subscriber), and calls changed for each message.
func (s *OutcomeStore) Subscribe(ctx context.Context, changed func()) error {
	ps := s.client.Subscribe(ctx, s.channel())
	defer ps.Close()
	if err := s.bounded(ctx, func(ctx context.Context) error { _, err := ps.Receive(ctx); return err }); err != nil {
		return fmt.Errorf("redisstore: subscribing to outcomes: %w", err)
	}
	changed() // writes before the subscription were not seen
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-ch:
			if !ok {
				return errors.New("redisstore: the subscription to outcomes was closed")
			}
			changed()
		}
	}
}

// Open returns the outcomes that are not final (see outcome.Store): the ids
// of the open set, each checked against its outcome.
func (s *OutcomeStore) Open(ctx context.Context, confirmedBefore, seenBefore time.Time) ([]outcome.Outcome, error) {
	var ids []string
	err := s.bounded(ctx, func(ctx context.Context) error {
		var err error
		ids, err = s.client.SMembers(ctx, s.openKey()).Result()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: listing open outcomes: %w", err)
	}
	var out []outcome.Outcome
	for _, id := range ids {
		o, _, err := s.load(ctx, id)
		switch {
		case errors.Is(err, outcome.ErrNotFound):
			// Expired, or added by an update that has not landed (yet):
			// removing it here could race with that update.
			continue
		case err != nil:
			return nil, err
		}
		open := !o.State.Final() && ((o.Kind == outcome.KindPayment && !o.ConfirmedAt.IsZero() && o.ConfirmedAt.Before(confirmedBefore)) ||
			(o.Kind == outcome.KindPayment && o.ConfirmedAt.IsZero() && o.FirstSeen.Before(seenBefore)) ||
			(o.Kind == outcome.KindRecipient && o.FirstSeen.Before(seenBefore)))
		if open {
			out = append(out, o)
		}
	}
	return out, nil
}

var (
	_ outcome.Store      = (*OutcomeStore)(nil)
	_ outcome.Subscriber = (*OutcomeStore)(nil)
)
