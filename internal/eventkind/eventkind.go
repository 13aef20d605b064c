// Package eventkind lists the specification's webhook event kinds, for the
// SDK's own tools (the fake's validation and dashboard, the CLI's usage text,
// the outcome tracker). Callers of the SDK switch on payments.EventType and
// treat an unknown kind in the default case; they need no list.
package eventkind

import (
	"slices"

	payments "github.com/paymentsapi/payments-go"
)

var all = []payments.EventType{
	payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentFailed,
	payments.EventPaymentRejected, payments.EventVirtualAccountPaymentReceived,
	payments.EventVirtualAccountCreated, payments.EventVirtualAccountUpdated,
	payments.EventRecipientCreated, payments.EventRecipientVerified,
	payments.EventRecipientVerificationFailed, payments.EventAccountBalanceLow,
	payments.EventAccountUpdated,
}

// All lists every event kind of the specification, in its order. The slice
// is the caller's to keep.
func All() []payments.EventType { return slices.Clone(all) }

// Known reports whether t is one of the specification's event kinds.
func Known(t payments.EventType) bool { return slices.Contains(all, t) }
