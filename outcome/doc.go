// Package outcome tells how every payment and recipient ended: a
// forward-only state machine over the service's events (Decide), a Tracker
// that records each outcome in a Store shared by replicas, Await to wait for
// a final outcome in any process, and Stuck to list what has none.
//
// The service answers "did it go through?" only asynchronously: a confirmed
// payment is pending until a payment.completed, payment.failed or
// payment.rejected event; a recipient is unverified until
// recipient.verified or recipient.verification_failed. Events arrive late,
// twice and out of order, so the tracker only moves forward: pending, then
// one final state. A late payment.initiated after payment.completed is
// recorded and ignored; a duplicate changes nothing and writes nothing; a
// second, different final event is kept as a conflict (Outcome.Conflict, a
// *ConflictError naming both events, and a log line), never an overwrite.
// Event kinds the tracker does not follow pass through untouched.
//
// Feed the tracker through the webhook handler's once-only path, so that a
// delivery, its retries and a listed copy of an event count once:
//
//	tracker := outcome.NewTracker(store) // nil: a MemoryStore
//	h := tracker.NewHandler(verifier, processEvent, webhook.WithStore(claims))
//
// then wait for a payment in any replica with Await, and list the payments
// that have no outcome with Stuck (the payments command prints them:
// payments payments stuck). The guide docs/outcomes.md shows the whole
// journey. eventstore/pgstore and eventstore/redisstore have shared stores;
// pgstore's Queue records each event in the transaction of its job, with
// the merchant's writes (Queue.Tracker).
package outcome
