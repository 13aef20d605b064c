// Package eventstore is the home of the webhook.ClaimStore implementations
// on shared databases, for webhook receivers that run on several replicas.
// It has no code of its own; each store is a package, so that a program
// imports only the driver it uses, and the payments package none:
//
//   - eventstore/pgstore: PostgreSQL, with pgx v5. Its Queue (the
//     recommended set-up, on River) answers the delivery once the event is
//     enqueued and runs your function in a worker, in the transaction that
//     completes the job, so that your writes to the same database happen
//     exactly once; its ClaimStore is the simpler at-least-once choice.
//   - eventstore/redisstore: Redis, with go-redis v9 (single server,
//     Sentinel or Cluster).
//
// Both claim each event id with a lease (5 seconds by default, renewed by
// the handler every third of it while the function runs, so that a dead
// replica's claim lapses while the sender still retries) and remember a
// processed id for a retention period (7 days by default, never less than
// twice the signature tolerance). A claim carries a random token, and only
// the claim that holds it may renew, complete or release the event, so a
// replica that stalled past its lease cannot undo the work of the replica
// that took the event over. Every call to the database has a deadline of
// its own (2 seconds by default, WithTimeout).
//
// Their tests run against real servers: see internal/testservers at the
// module root.
package eventstore
