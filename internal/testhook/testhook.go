// Package testhook reaches the settings that the SDK's packages keep out of
// their API because only the SDK's own tests need them (a clock, for one):
// issue 35 wants no exported test seam. A package sets its hooks in an init
// function; the tests of other packages of this repository call them. A
// merchant cannot import it (it is internal), and nothing but tests does.
package testhook

import "time"

// TrackerClock returns an outcome.Option (as any: this package cannot import
// outcome, which sets it) that makes a Tracker read the time from now.
var TrackerClock func(now func() time.Time) any

// TrackerPollInterval returns an outcome.Option (as any) that sets the
// longest wait between two reads of the store by Await (d <= 0 keeps
// outcome.DefaultPollInterval): tests that must see a poll sooner, or never.
var TrackerPollInterval func(d time.Duration) any

// HandlerRecentlyDone returns a webhook.HandlerOption (as any) that makes a
// handler remember n processed events (webhook.DefaultRecentlyDone serves
// merchants; tests that must see every delivery reach the store pass 0).
var HandlerRecentlyDone func(n int) any

// HandlerClaimStoreTimeout returns a webhook.HandlerOption (as any) that
// sets the deadline of each call a handler makes to its store (d <= 0 keeps
// webhook.DefaultClaimStoreTimeout).
var HandlerClaimStoreTimeout func(d time.Duration) any
