package webhook

import (
	"encoding/json"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// triggeredPrefix starts the reference of the resource in every test event
// that paymentstest or the payments-sandbox sends for Webhooks.Trigger, and
// of no other event (docs/assumptions.md, "Test events").
const triggeredPrefix = "test_trigger_"

// Triggered reports whether ev is a test event sent for Webhooks.Trigger:
// its resource's reference starts with "test_trigger_". An EventFunc that
// books orders acknowledges such an event without booking it.
//
// The marker is the one paymentstest and the payments-sandbox give their
// test events; the specification does not say how the service marks its
// own (see the Assumptions, "Test events"). It lives here, beside the
// handler, so that a production receiver does not link the fake in.
// Tested by TestTriggered (triggered_test.go) and, against the fake, by
// paymentstest's TestTriggeredEventsAreMarked.
func Triggered(ev *payments.Event) bool {
	var d struct {
		Reference any `json:"reference"`
	}
	if ev == nil || json.Unmarshal(ev.Data, &d) != nil { // data that is not an object has no reference
		return false
	}
	ref, _ := d.Reference.(string)
	return strings.HasPrefix(ref, triggeredPrefix)
}
