package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// How Claim asks Redis, in ClaimStore.claims.
const (
	claimsUnknown   int32 = iota // the server's version is not known yet
	claimsDetecting              // a Claim is reading the version
	claimsNative                 // SET NX PX GET: Redis 7.0 and later
	claimsScript                 // claimScript: older servers
)

// claimScript: SET NX PX takes a free id; when the key exists, its value
// says whether the event is claimed or done. Atomic, so the two cannot
// disagree. Redis 7.0's SET ... NX GET does the same in one command; this
// is for older servers.
//
// KEYS[1] the event's key; ARGV[1] "processing:<token>"; ARGV[2] lease ms.
var claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return redis.call('GET', KEYS[1])
`)

// claim writes value at key, with the lease as its TTL, unless the key
// exists. It returns int64(1) when it wrote it, else the key's value.
// On Redis 7.0 and later that is one SET key value NX PX lease GET, which
// writes nothing when the key exists and returns its value either way;
// on older servers, claimScript.
func (s *ClaimStore) claim(ctx context.Context, key, value string) (any, error) {
	ms := s.opts.lease.Milliseconds()
	if s.native(ctx) {
		v, err := s.client.Do(ctx, "SET", key, value, "NX", "PX", ms, "GET").Result()
		switch {
		case errors.Is(err, redis.Nil):
			return int64(1), nil
		case err == nil:
			return v, nil
		case !refusedSyntax(err):
			return nil, err
		}
		// A server that refuses NX with GET is older than its INFO said
		// (a Cluster node or a replica promoted mid-upgrade): use the
		// script from now on.
		s.claims.Store(claimsScript)
	}
	return claimScript.Run(ctx, s.client, []string{key}, value, ms).Result()
}

// refusedSyntax says whether err is Redis refusing the command's
// arguments, as Redis before 7.0 refuses SET with both NX and GET.
func refusedSyntax(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "ERR syntax")
}

// native says whether claims are one native command. The first Claim
// reads the server's version (INFO server) and keeps the answer; claims
// made while it reads, or after it failed to read (the next Claim tries
// again), use the script, which every version runs.
func (s *ClaimStore) native(ctx context.Context) bool {
	switch s.claims.Load() {
	case claimsNative:
		return true
	case claimsUnknown:
	default:
		return false
	}
	if !s.claims.CompareAndSwap(claimsUnknown, claimsDetecting) {
		return s.claims.Load() == claimsNative
	}
	found := claimsUnknown
	defer func() { s.claims.Store(found) }()
	info, err := s.client.Info(ctx, "server").Result()
	var refused redis.Error
	switch {
	case errors.As(err, &refused):
		// INFO is not allowed (an ACL): try the native command, which
		// an older server refuses, and claim turns to the script.
		found = claimsNative
		return true
	case err != nil:
		return false
	}
	major, ok := serverMajor(info)
	switch {
	case !ok:
		found = claimsScript
	case major >= 7:
		found = claimsNative
	default:
		found = claimsScript
	}
	return found == claimsNative
}

// serverMajor reads the major version from the reply of INFO server
// ("redis_version:7.2.4").
func serverMajor(info string) (int, bool) {
	for _, line := range strings.Split(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !ok {
			continue
		}
		major, _, _ := strings.Cut(v, ".")
		n, err := strconv.Atoi(major)
		return n, err == nil
	}
	return 0, false
}
