package outcome_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// pay confirms a payment of amount on the fake and returns it.
func pay(ctx context.Context, client *payments.Client, reference, amount string) *payments.Payment {
	r, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789",
		AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString(amount)},
		Currency: "NGN", RecipientID: r.ID, Reference: reference})
	if err != nil {
		log.Fatal(err)
	}
	if p, err = client.Payments.Confirm(ctx, p.ConfirmParams()); err != nil {
		log.Fatal(err)
	}
	return p
}

// The webhook handler feeds the tracker (Wrap), and Await waits for the
// payment's final outcome: here one that fails, with the event that said so.
func ExampleTracker_Await() {
	tracker := outcome.NewTracker(nil) // a MemoryStore; share a pgstore or redisstore one between replicas
	verifier, err := webhook.NewSignatureVerifier([]string{"whsec_example"})
	if err != nil {
		log.Fatal(err)
	}
	handler := webhook.NewHandler(verifier, tracker.Wrap(func(ctx context.Context, ev *payments.Event) error {
		return nil // your own processing: mark the order paid, ...
	}))
	receiver := httptest.NewServer(handler)
	defer receiver.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{"whsec_example"}}))
	defer srv.Close()
	ctx := context.Background()

	p := pay(ctx, srv.Client(), "order-1001", paymentstest.AmountFails)
	if err := tracker.Confirmed(ctx, p); err != nil { // for Stuck
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := tracker.Await(ctx, "order-1001") // or p.ID
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ID == p.ID, res.State, res.EventType)
	// Output: true failed payment.failed
}

// With no delivery at all (the fake has no webhook URL), Await asks the
// service's event list after WithEventList's wait, and runs what it finds
// through the handler's Reconcile, so the handler's function sees it once.
func ExampleTracker_Await_eventList() {
	srv := paymentstest.NewServer() // deliveries off
	defer srv.Close()
	client := srv.Client()
	tracker := outcome.NewTracker(nil, outcome.WithEventList(client, 100*time.Millisecond))
	verifier, err := webhook.NewSignatureVerifier([]string{"whsec_example"})
	if err != nil {
		log.Fatal(err)
	}
	handler := tracker.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		fmt.Println("processed", ev.Type)
		return nil
	})
	_ = handler // serve it at your webhook URL (deliveries are off here)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	p := pay(ctx, client, "order-1002", "2500.00")
	res, err := tracker.Await(ctx, p.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State, res.IsCompleted)
	// Output:
	// processed recipient.created
	// processed recipient.verified
	// processed payment.initiated
	// processed payment.completed
	// completed true
}

// Stuck lists the payments confirmed more than a given time ago that have
// no final outcome: here one whose outcome never came.
func ExampleTracker_Stuck() {
	tracker := outcome.NewTracker(nil)
	ctx := context.Background()
	_ = tracker.Confirmed(ctx, &payments.Payment{ID: "pay-17", Reference: "row-17"})
	time.Sleep(20 * time.Millisecond) // no outcome comes; in production, wait an hour or more

	stuck, err := tracker.Stuck(ctx, 10*time.Millisecond) // in production: time.Hour, say
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range stuck {
		fmt.Println(o.Kind, o.ID, o.Reference, o.State, "confirmed", time.Since(o.ConfirmedAt) >= 20*time.Millisecond, "ago")
	}
	// Output: payment pay-17 row-17 pending confirmed true ago
}
