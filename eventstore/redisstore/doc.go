// Package redisstore is a webhook.Store in Redis, for webhook
// receivers that run on several replicas: every replica's
// webhook.Handler claims each event id in one shared Redis, so that
// each event is processed once however many times, and to whichever
// replica, the service delivers it. It uses go-redis v9: any
// redis.UniversalClient, so a single server, Sentinel and Cluster all work.
//
//	client := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	store, err := redisstore.New(client)
//	...
//	h := webhook.NewHandler(verifier, processEvent, webhook.WithStore(store))
//
// # Keys
//
// Each event is one key, the prefix (DefaultPrefix, WithPrefix) and the
// event id. Claim is SET key "processing:<token>" NX PX <lease>, and when the
// key exists its value tells "in progress" from "done", in one script.
// Complete is a script that rewrites "processing:<token>" into
// "done:<token>" with the retention as TTL; Release a script that deletes
// it. Both compare the token first and return webhook.ErrClaimLost when
// it is not theirs, so a replica whose lease ran out never settles the claim
// another replica took over. Every script touches that one key, so it runs
// on Redis Cluster; they are sent with EVALSHA, and EVAL when the server
// does not know them yet.
//
// Leases and retention are TTLs kept by Redis, so the replicas' clocks do
// not matter. The handler cancels the EventFunc's context at the claim's
// LeaseExpires, which the store reads on the replica's monotonic clock before
// sending the claim: it always comes before Redis drops the key. Defaults: a
// lease of DefaultLease (1 minute: longer than your processing, shorter
// than the service's first retry, so that a dead replica's claim has lapsed
// when the event comes again), a retention of DefaultRetention (7 days;
// never less than MinRetention, twice the signature tolerance). Expired keys
// disappear by themselves: there is nothing to purge. A claim whose lease
// ran out is gone even when no other delivery took it over, so its late
// Complete returns webhook.ErrClaimLost (pgstore, by contrast, completes a
// lapsed claim that nobody took over).
//
// # What Redis must promise
//
// The store is only as durable as the Redis behind it. A processed id that
// Redis forgets is an event processed again when it is redelivered, so:
//
//   - persist every write: appendonly yes with appendfsync always (or
//     everysec, if losing the last second of completions on a crash is
//     acceptable to you);
//   - never evict: maxmemory-policy noeviction (the keys have TTLs, so the
//     volatile-* policies would evict them too); budget about 230 bytes per
//     event kept (at the default prefix and retention, one event a second
//     is about 140 MB);
//   - with replicas, know that a failover can lose the last writes, which
//     Redis replicates asynchronously.
//
// With the handler, an event's effects happen at least once and normally
// once: if Redis becomes unreachable after your function succeeded and
// before the handler records it (it logs "event processed but not recorded
// as done"), or if a replica stalls past its lease while its function
// carries on, a later delivery may run the function again. Make your
// function's effects idempotent where that matters, or use
// eventstore/pgstore, whose Transactional mode commits them with the
// record of the event.
package redisstore
