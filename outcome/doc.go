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
// A record's steps (Outcome.Steps) are the events that changed it: the
// first state and the final one (EffectForward), a late open event after a
// final one (EffectBackward), a second, different final event
// (EffectConflict), and the current state again with other flags or a new
// reference (EffectFlags). Duplicates, repeats of the state and flags, and
// kinds the tracker does not follow make no step. A record keeps at most
// MaxSteps steps, whatever the number of events: past that the oldest are
// dropped and counted (Outcome.DroppedSteps), never the steps that set the
// state nor the first conflicting one (see MaxSteps).
//
// Stuck lists what has no final outcome after a while: payments confirmed
// (Tracker.Confirmed) before the cut-off, payments never confirmed, known
// only from their events, first seen before it (ConfirmedAt zero), and
// recipients first seen before it.
//
// Feed the tracker through the webhook handler's once-only path, so that a
// delivery, its retries and a listed copy of an event count once:
//
//	tracker := outcome.NewTracker(store) // nil: a MemoryStore
//	h := tracker.NewHandler(verifier, processEvent, webhook.WithClaimStore(claims))
//
// then wait for a payment in any replica with Await, and list the payments
// that have no outcome with Stuck (the payments command prints them:
// payments payments stuck). The guide docs/outcomes.md shows the whole
// journey. eventstore/pgstore and eventstore/redisstore have shared stores;
// pgstore's Queue records each event in the transaction of its job, with
// the merchant's writes (Queue.Tracker).
package outcome
