package main

import (
	"slices"

	payments "github.com/paymentsapi/payments-go"
)

// eventKinds is a copy of the list in the root module's internal/eventkind:
// the specification's webhook event kinds, in its order, for the usage text
// and the check of trigger's argument. This module is released on its own,
// so it keeps a copy instead of importing another module's internal package
// (TestNoInternalImportAcrossModules, in the root module); TestEventKindsCopy
// fails when the two lists differ.
var eventKinds = []payments.EventType{
	payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentFailed,
	payments.EventPaymentRejected, payments.EventVirtualAccountPaymentReceived,
	payments.EventVirtualAccountCreated, payments.EventVirtualAccountUpdated,
	payments.EventRecipientCreated, payments.EventRecipientVerified,
	payments.EventRecipientVerificationFailed, payments.EventAccountBalanceLow,
	payments.EventAccountUpdated,
}

// knownEventKind reports whether t is one of the specification's event kinds.
func knownEventKind(t payments.EventType) bool { return slices.Contains(eventKinds, t) }
