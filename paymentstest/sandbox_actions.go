package paymentstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

// The actions of the dashboard that change the server's resources: an
// event triggered for a stored resource, and a pending payment settled.
// The admin API and the dashboard both call these methods.

// Errors of TriggerEvent and SettlePayment. Match them with errors.Is.
var (
	// errUnknownEventKind: the event type is not one of the specification's kinds.
	errUnknownEventKind = errors.New("paymentstest: unknown event type")
	// errUnknownResource: no recipient, payment or virtual account (or, for
	// the account events, currency) has this id.
	errUnknownResource = errors.New("paymentstest: no such resource")
	// errNotSettleable: the payment is not pending after a confirm, so
	// SettlePayment cannot end it.
	errNotSettleable = errors.New("paymentstest: the payment is not pending after a confirm")
)

// triggerTestEvent produces an event of kind whose data is the stored resource
// with this id, as it is now, and delivers it like any event: a recipient
// for the recipient.* kinds, a payment for payment.* (its status shown as
// the kind says: completed, failed, rejected or pending; the stored payment
// does not change, SettlePayment changes it), a virtual account for
// virtual_account.* (for virtual_account.payment_received, the latest
// payment it received), and a currency for account.* (its balance). An
// empty resourceID sends sample data, as POST
// /webhooks/events/trigger/{event_id} does. It returns errUnknownEventKind
// or errUnknownResource (wrapped, naming what is missing) and records
// nothing then. The dashboard's Trigger button and POST
// /_sandbox/events/trigger call it.
func (s *Server) triggerTestEvent(kind payments.EventType, resourceID string) (Event, error) {
	if !eventkind.Known(kind) {
		return Event{}, fmt.Errorf("%w %q: use one of %s", errUnknownEventKind, kind, strings.Join(eventNames(), ", "))
	}
	if s.closed() {
		return Event{}, errClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var v any
	if resourceID == "" {
		v = s.sample(kind)
	} else {
		var err error
		if v, err = s.resourceFor(kind, resourceID); err != nil {
			return Event{}, err
		}
	}
	data, err := json.Marshal(v)
	if err != nil { // the server's own types: cannot happen
		return Event{}, err
	}
	return s.emit(kind, data), nil
}

// resourceFor is the data of an event of kind about the resource id. s.mu
// must be held.
func (s *Server) resourceFor(kind payments.EventType, id string) (any, error) {
	missing := func(what string) error { return fmt.Errorf("%w: no %s with id %q", errUnknownResource, what, id) }
	switch k := string(kind); {
	case strings.HasPrefix(k, "payment."):
		p, ok := s.st.paymentByID[id]
		if !ok {
			return nil, missing("payment")
		}
		next := *p
		next.Status = map[payments.EventType]payments.PaymentStatus{
			payments.EventPaymentCompleted: payments.PaymentStatusCompleted,
			payments.EventPaymentFailed:    payments.PaymentStatusFailed,
			payments.EventPaymentRejected:  payments.PaymentStatusRejected,
		}[kind]
		if next.Status == "" {
			next.Status = payments.PaymentStatusPending
		}
		next.IsCompleted = next.Status == payments.PaymentStatusCompleted
		return next.json(), nil
	case strings.HasPrefix(k, "recipient."):
		r, ok := s.st.recipientByID[id]
		if !ok {
			return nil, missing("recipient")
		}
		return r.json(), nil
	case kind == payments.EventVirtualAccountPaymentReceived:
		va, ok := s.st.accountByID[id]
		if !ok {
			return nil, missing("virtual account")
		}
		for i := len(s.st.incoming) - 1; i >= 0; i-- {
			if in := s.st.incoming[i]; in.VirtualAccountID == va.ID {
				return in.json(), nil
			}
		}
		return nil, fmt.Errorf("%w: virtual account %q has received nothing yet (SimulateIncomingPayment)", errUnknownResource, id)
	case strings.HasPrefix(k, "virtual_account."):
		va, ok := s.st.accountByID[id]
		if !ok {
			return nil, missing("virtual account")
		}
		return va.json(), nil
	case strings.HasPrefix(k, "account."):
		c := strings.ToUpper(id)
		if !currencyPattern.MatchString(c) {
			return nil, fmt.Errorf("%w: the account events take a currency such as NGN, not %q", errUnknownResource, id)
		}
		b := &s.st.money
		return balanceLowJSON{MerchantID: s.merchantID, Currency: c, Balance: money(b.of(c)),
			Threshold: money(b.threshold), CreatedAt: stamp(s.clock.now())}, nil
	}
	return nil, missing("resource")
}

// SettlePayment ends a payment that is pending after its confirm (one of
// AmountCompletesLate, before its processing delay has passed) as status
// says: payments.PaymentStatusCompleted, Failed or Rejected, and sends the
// matching payment.* event. A failed or rejected payment gives its total
// back to the balance. The late completion it replaces never comes
// (TestSettlePaymentReplacesTheLateCompletion). It
// returns the payment as settled, or an error saying what is wrong (an
// unknown id, a payment not pending after a confirm, or any other status),
// changing nothing then. The dashboard's
// Complete, Fail and Reject buttons and POST /_sandbox/payments/{id}/settle
// call it.
func (s *Server) SettlePayment(id string, status payments.PaymentStatus) (payments.Payment, error) {
	event, ok := map[payments.PaymentStatus]payments.EventType{
		payments.PaymentStatusCompleted: payments.EventPaymentCompleted,
		payments.PaymentStatusFailed:    payments.EventPaymentFailed,
		payments.PaymentStatusRejected:  payments.EventPaymentRejected,
	}[status]
	if !ok {
		return payments.Payment{}, fmt.Errorf("paymentstest: SettlePayment: status %q: use completed, failed or rejected", status)
	}
	if s.closed() {
		return payments.Payment{}, errClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pay, ok := s.st.paymentByID[id]
	switch {
	case !ok:
		return payments.Payment{}, fmt.Errorf("%w: no payment with id %q", errUnknownResource, id)
	case !pay.Confirmed || pay.Status != payments.PaymentStatusPending:
		state := "not confirmed"
		if pay.Status != payments.PaymentStatusPending {
			state = string(pay.Status)
		}
		return payments.Payment{}, fmt.Errorf("%w: payment %s is %s", errNotSettleable, id, state)
	}
	s.settle(pay, status, event)
	return pay.sdk(), nil
}

// settle ends a pending payment and sends its event. s.mu must be held.
func (s *Server) settle(pay *payment, status payments.PaymentStatus, event payments.EventType) {
	next := *pay
	next.Status, next.IsCompleted, next.UpdatedAt = status, status == payments.PaymentStatusCompleted, s.clock.now()
	data, err := json.Marshal(next.json())
	if err != nil { // the server's own types: cannot happen
		return
	}
	*pay = next
	s.emit(event, data)
	if status != payments.PaymentStatusCompleted {
		s.credit(pay.Currency, pay.Quote.TotalAmount) // confirm drew it
	}
}
