package payments

// EventType names a kind of webhook event. Kinds this SDK does not know yet
// still parse, and keep their name.
type EventType string

// The event kinds of the specification.
const (
	EventPaymentInitiated              EventType = "payment.initiated"
	EventPaymentCompleted              EventType = "payment.completed"
	EventPaymentFailed                 EventType = "payment.failed"
	EventPaymentRejected               EventType = "payment.rejected"
	EventVirtualAccountPaymentReceived EventType = "virtual_account.payment_received"
	EventVirtualAccountCreated         EventType = "virtual_account.created"
	EventVirtualAccountUpdated         EventType = "virtual_account.updated"
	EventRecipientCreated              EventType = "recipient.created"
	EventRecipientVerified             EventType = "recipient.verified"
	EventRecipientVerificationFailed   EventType = "recipient.verification_failed"
	EventAccountBalanceLow             EventType = "account.balance_low"
	EventAccountUpdated                EventType = "account.updated"
)

// EventTypes lists every event kind of the specification, in its order.
func EventTypes() []EventType {
	return []EventType{
		EventPaymentInitiated, EventPaymentCompleted, EventPaymentFailed, EventPaymentRejected,
		EventVirtualAccountPaymentReceived, EventVirtualAccountCreated, EventVirtualAccountUpdated,
		EventRecipientCreated, EventRecipientVerified, EventRecipientVerificationFailed,
		EventAccountBalanceLow, EventAccountUpdated,
	}
}

// Known reports whether t is one of the specification's event kinds.
func (t EventType) Known() bool {
	for _, k := range EventTypes() {
		if k == t {
			return true
		}
	}
	return false
}
