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
