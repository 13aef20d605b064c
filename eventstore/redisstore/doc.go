// Package redisstore is a webhook.ClaimStore in Redis, for webhook
// receivers that run on several replicas: every replica's
// webhook.Handler claims each event id in one shared Redis, so that
// each event is processed once however many times, and to whichever
// replica, the service delivers it. It uses go-redis v9: any
// redis.UniversalClient, so a single server, Sentinel and Cluster all work.
//
//	opts := &redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true}
//	opts.Dialer = redisstore.RetryDial(redis.NewDialer(opts))
//	store, err := redisstore.NewClaimStore(redis.NewClient(opts))
//	...
//	h := webhook.NewHandler(verifier, processEvent, webhook.WithClaimStore(store))
//
// # The client
//
// Set two of the client's options, as above, or on the options that
// redis.ParseURL returns (redis.ClusterOptions and redis.FailoverOptions
// have both too; for them, give RetryDial a dialer that does your TLS, or
// nil without TLS):
//
//   - ContextTimeoutEnabled: true. The store gives every command a deadline
//     (WithTimeout); go-redis keeps it only with this option, and otherwise
//     waits out its ReadTimeout (3 s) for a reply that a frozen Redis
//     holds. Without it the store still returns by the deadline, but hands
//     each command to a goroutine that it can stop waiting for: a hand-off
//     and a few allocations more per command (BenchmarkContextTimeout).
//   - Dialer: RetryDial(redis.NewDialer(opts)). After as many failed dials
//     as its PoolSize (a Redis restart makes them within a second under
//     load), go-redis fails every command at once, without dialling, until
//     a probe that dials once a second connects: up to a second after Redis
//     is back, enough to lose a claim whose lease was about to be renewed.
//     With RetryDial each dial keeps trying, every 50 ms, for go-redis'
//     DialTimeout (5 s), so a shorter restart never brings go-redis to
//     that, and the client works within about 50 ms of Redis accepting
//     connections (TestRetryDialRidesOutARestart).
//
// The store itself tries again, until its deadline, a command that could
// not connect (it sent nothing, so it cannot run twice;
// TestStoreRedialsWithinItsDeadline). So a claim whose function is running
// keeps its lease through a Redis restart that ends before the lease does:
// the lease ends at the last renewal plus the lease, at least two thirds of
// a lease after the restart began (Redis keeps the end as a time, so it
// passes while Redis is down), and the first renewal once Redis is back
// extends it. With the default lease of 5 s, that is a restart shorter
// than about 3 s (TestLeaseSurvivesARestart: a lease of 4 s through a
// restart of 1 s). A longer one may lapse the claim, and a redelivery then
// runs the event again.
//
// # Keys
//
// Each event is one key: the prefix (DefaultPrefix, WithPrefix), then the
// event id with '%' written "%25" and ':' written "%3A". A prefix that does
// not end with ':', or holds a '%', is written the same way and followed by
// "%:". The last ':' of a key thus ends its prefix, and no two (prefix, id)
// pairs share a key (TestKeysDoNotCollide): "tenant1" with "0evt_1" and
// "tenant10" with "evt_1" are two events. With the default prefix, the key
// of an id without ':' or '%' (as the service makes them) is
// "payments:webhook-event:<id>".
//
// Claim is one command on Redis 7.0 and later,
// SET key "processing:<token>" NX PX <lease> GET: it takes a free id, and
// when the key exists it writes nothing and returns its value, which tells
// "in progress" from "done". The first Claim reads the server's
// version (INFO server) and the store keeps it; on an older server, or one
// that refuses SET with NX and GET, Claim runs a script that does the same
// (TestClaimIsOneNativeCommandOnRedis7, TestClaimOnOlderServers).
// Renew is a script that extends the TTL of "processing:<token>"; Complete
// one that rewrites it into "done:<token>" with the retention as TTL (or
// writes it when the key is gone: the claim lapsed and nobody took it
// over); Release one that deletes it. They compare the token first and
// return webhook.ErrClaimLost when another claim holds the key, so a
// replica whose lease ran out never settles the claim another replica took
// over. Every command on an event touches its key only, so it runs on
// Redis Cluster; the scripts are sent with EVALSHA, and EVAL when the
// server does not know them yet.
//
// Leases and retention are TTLs kept by Redis, so the replicas' clocks do
// not matter. The claim's LeaseExpires, which the handler's renewals and
// cancellation run on, is read on the replica's monotonic clock before the
// command is sent: it always comes before Redis drops the key. Defaults: a
// lease of DefaultLease (5 seconds), which the handler renews every third of
// it while the function runs: a function may run longer, and a replica that
// dies stops renewing, so its claim lapses while the service still retries
// (keep the lease a third or less of the service's retry span); a deadline
// of DefaultTimeout (2 seconds) on every command (WithTimeout), kept whatever
// the client's options: go-redis otherwise waits ReadTimeout (3 seconds)
// for a reply that a partition holds, and retries a timed-out command
// MaxRetries (3) times; and a retention of DefaultRetention (7 days; never
// less than MinRetention, twice the signature tolerance). Expired keys
// disappear by themselves: there is nothing to purge. A claim whose lease ran
// out is gone even when no other delivery took it over: Renew then returns
// webhook.ErrClaimLost, and Complete writes the completion.
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
// once: when Redis becomes unreachable after your function succeeded, the
// handler keeps the claim and retries the record until it lands, but a
// replica killed between your function's effects and the record, or cut off
// from Redis for longer than its lease, or a function that carries on past
// its cancelled context, leaves the event to a later delivery, which runs
// the function again. Make your function's effects idempotent where that
// matters, or use eventstore/pgstore's Queue, whose workers commit them
// with the completion of the event's job.
package redisstore
