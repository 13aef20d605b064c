package paymentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
	"github.com/shopspring/decimal"
)

// Event is an event the fake produced, whether or not a webhook URL was set
// to deliver it.
type Event struct {
	ID        string
	Type      payments.EventType
	CreatedAt time.Time
	// Data is the event's resource: the same JSON as the data member of
	// the API response that caused it.
	Data json.RawMessage
	// Body is the webhook body: {"id", "event", "created_at", "data"}.
	Body []byte
}

type eventJSON struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// emit records an event and queues its delivery. Callers hold s.mu, so
// events are queued in the order the changes happened.
func (s *Server) emit(t payments.EventType, data json.RawMessage) Event {
	data = s.differEvent(t, data) // differences.go; data as it is without WithDifferences
	ev := Event{ID: s.ids.uuid(), Type: t, CreatedAt: s.clock.now(), Data: data}
	body, err := json.Marshal(eventJSON{ID: ev.ID, Event: string(t), CreatedAt: stamp(ev.CreatedAt), Data: data})
	if err != nil { // data is the server's own JSON: cannot happen
		return ev
	}
	ev.Body = body
	s.hooks.publish(ev)
	return ev
}

// Events returns the events the server produced, oldest first, including
// those not delivered because no webhook URL was set: the last
// 10,000 of them, or as many as Sandbox.LogLimit says.
func (s *Server) Events() []Event {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Event, d.events.len())
	d.events.each(func(i int, ev Event) {
		ev.Data = append(json.RawMessage(nil), ev.Data...)
		ev.Body = append([]byte(nil), ev.Body...)
		out[i] = ev
	})
	return out
}

// triggerEvent is POST /webhooks/events/trigger/{event_id}: it sends a test
// event of the named kind, with sample data, to the webhook URL.
func (s *Server) triggerEvent(rq *apiRequest) *response {
	kind := payments.EventType(rq.param)
	if !eventkind.Known(kind) {
		return s.invalid(problems{{Field: "event_id", Message: "must be one of " + strings.Join(eventNames(), ", ")}})
	}
	if s.webhookURLValue() == "" {
		return s.fail(http.StatusUnprocessableEntity, payments.CodeWebhookNotConfigured,
			"no webhook URL is configured (paymentstest.WithWebhook, Server.SetWebhookURL, or PUT "+adminPrefix+"webhook-url)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := json.Marshal(s.sample(kind))
	if err != nil {
		return s.internal(err)
	}
	ev := s.emit(kind, data)
	out, err := json.Marshal(map[string]string{"id": ev.ID, "event": string(kind), "created_at": stamp(ev.CreatedAt)})
	if err != nil {
		return s.internal(err)
	}
	return s.ok(http.StatusOK, fmt.Sprintf("Test event %s queued for delivery", kind), out)
}

// testIDPrefix starts the id of every resource in a triggered test event:
// the ids stay UUIDs, as the specification has them, but no real one starts
// with eight zeros and a version-4 block of zeros.
const testIDPrefix = "00000000-0000-4000-8000-"

// testID makes the id of a resource in a test event: testIDPrefix and 12
// random hexadecimal digits.
func (s *Server) testID() string {
	u := s.ids.uuid()
	return testIDPrefix + u[len(u)-12:]
}

// sample makes the data of a test event: a made-up resource of the kind the
// event carries, which the server does not store. Its reference starts with
// triggeredPrefix (a member added where the resource has
// none) and its ids with testIDPrefix, so that a receiver can tell it from
// a real one; no other event carries either.
func (s *Server) sample(kind payments.EventType) any {
	now := s.clock.now()
	amount := decimal.NewFromInt(1000)
	u := s.ids.uuid()
	ref := triggeredPrefix + strings.ReplaceAll(string(kind), ".", "_") + "_" + u[:8]
	switch {
	case strings.HasPrefix(string(kind), "payment."):
		status := map[payments.EventType]payments.PaymentStatus{
			payments.EventPaymentInitiated: payments.PaymentStatusPending,
			payments.EventPaymentCompleted: payments.PaymentStatusCompleted,
			payments.EventPaymentFailed:    payments.PaymentStatusFailed,
			payments.EventPaymentRejected:  payments.PaymentStatusRejected,
		}[kind]
		fee := quoteFee(amount)
		p := payment{
			ID: s.testID(), RecipientID: s.testID(), Reference: ref, Status: status,
			Amount: amount, Currency: "NGN", Description: "Test event", Type: "transfer", Channel: "api",
			IsCompleted:     status == payments.PaymentStatusCompleted,
			TransactionDate: now, CreatedAt: now, UpdatedAt: now,
			Quote: quote{
				ID: s.testID(), Amount: amount, Fee: fee, ExchangeRate: decimal.NewFromInt(1),
				TotalAmount: amount.Add(fee), Currency: "NGN", CreatedAt: now, ExpiresAt: now.Add(payments.QuoteLifetime),
			},
		}
		return p.json()
	case strings.HasPrefix(string(kind), "recipient."):
		r := recipient{
			ID: s.testID(), MerchantID: s.merchantID, AccountNumber: "0123456789", AccountName: "Test Recipient",
			AccountType: "individual", AccountCurrency: "NGN", AccountBankName: "Sandbox Bank", AccountBankCode: "999",
			AccountCountryCode: "NG", AccountCountry: "Nigeria", CreatedAt: now, UpdatedAt: now,
		}
		j := r.json()
		j.Reference = ref
		return j
	case kind == payments.EventVirtualAccountPaymentReceived:
		in := IncomingPayment{
			ID: s.testID(), VirtualAccountID: s.testID(), AccountNumber: "9990001112", AccountName: "Test Account",
			Amount: amount, Currency: "NGN", Reference: ref, PayerName: "Sandbox Payer",
			PayerAccount: "0123456789", PayerBank: "Sandbox Payer Bank", CreatedAt: now,
		}
		return in.json()
	case strings.HasPrefix(string(kind), "virtual_account."):
		va := virtualAccount{
			ID: s.testID(), Currency: "NGN", AccountNumber: "9990001112", AccountName: "Test Account",
			BankName: sandboxBankName, IsActive: true, CreatedAt: now,
		}
		j := va.json()
		j.Reference = ref
		return j
	case kind == payments.EventAccountBalanceLow:
		return map[string]string{
			"merchant_id": s.merchantID, "currency": "NGN", "balance": "5000.00",
			"threshold": "10000.00", "created_at": stamp(now), "reference": ref,
		}
	}
	return map[string]string{"merchant_id": s.merchantID, "updated_at": stamp(now), "reference": ref}
}

// triggeredPrefix starts the reference of the resource in every test event
// that this server sends for Webhooks.Trigger (or the sandbox's trigger
// actions), and of no other event: the marker webhook.Triggered checks. The
// specification does not say how the service marks test events (see the
// Assumptions): this marker is the fake's.
const triggeredPrefix = "test_trigger_"
