// Package webhook receives the Payments API's webhooks: it verifies each
// delivery's signature, parses it into a payments.Event, drops duplicates and
// calls your function once per event, even when several replicas of your
// receiver share the work.
//
// The pieces, from the outside in:
//
//   - Handler is the http.Handler to mount at the URL the service posts
//     to. It answers each delivery with the status the service's retries
//     need. It works in one of two modes. NewQueueHandler hands each
//     verified event off to your queue (an EnqueueFunc such as
//     pgstore.Queue.Enqueue) and answers once it is recorded: nothing
//     more, and no claim or lease. A delivery so handed off crosses
//     serve.go, the Verifier's file (signature.go or standard.go) and
//     the event's parse in package payments (events.go, envelope.go),
//     and, with a logger or an observer, the surprise scan (surprise.go,
//     internal/surprise): TestHandOffPathFiles. NewHandler runs your
//     function during the delivery, under a claim, for a receiver
//     without a queue (see Handler).
//   - A Verifier checks that a delivery comes from the service:
//     SignatureVerifier for the Payments-Signature scheme the SDK assumes,
//     StandardVerifier for Standard Webhooks. ConstructEvent verifies and
//     parses in one call for a receiver that brings its own HTTP stack.
//   - In NewHandler's mode, a ClaimStore remembers which event ids were
//     processed, in two phases (Claim,
//     then Complete or Release) with a lease that the handler renews while
//     your function runs, so that an event is processed once across
//     replicas and a dead replica's claim lapses within seconds (see
//     DefaultLease for the rule). Every store call has a deadline, and a
//     completion the store could not take is retried in the background
//     until it lands (Handler.Shutdown waits for it). MemoryClaimStore is
//     the default, private to one process; the modules eventstore/pgstore
//     (PostgreSQL) and eventstore/redisstore (Redis) share one store between
//     replicas.
//   - Handler.Reconcile recovers the events whose deliveries all failed:
//     it runs the service's list of events (payments' Webhooks.ListEvents)
//     through the same function and store, so that each event is processed
//     once whichever path brings it, and returns a checkpoint to list from
//     next time.
//   - SignPayload and SignStandard sign test deliveries the way the service
//     does, for your own tests.
//
// The events themselves, their kinds and typed accessors (payments.Event,
// payments.ParseEvent) belong to the payments package, which describes the
// service's data; this package only receives them.
package webhook
