package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// A test event sent by Webhooks.Trigger to paymentstest or the sandbox is
// recognisable (webhook.Triggered), so a receiver can acknowledge it
// without booking anything.
func Example_triggeredEvent() {
	const secret = "whsec_example"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		log.Fatal(err)
	}
	handler := webhook.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		if webhook.Triggered(ev) {
			fmt.Println("test event, skipped:", ev.Type)
			return nil // acknowledged: the service does not send it again
		}
		if ev.Type == payments.EventVirtualAccountPaymentReceived {
			p, err := ev.VirtualAccountPayment()
			if err != nil {
				return err
			}
			fmt.Println("credit", p.Amount.StringFixed(2), p.Currency)
		}
		return nil
	})
	receiver := httptest.NewServer(handler)
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	account, err := client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example",
	})
	if err != nil {
		log.Fatal(err)
	}
	// A customer pays in (a real event), then a test event of the same kind.
	if _, err := srv.SimulateIncomingPayment(string(account.AccountNumber), decimal.RequireFromString("5000"), "NGN"); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Webhooks.Trigger(ctx, payments.EventVirtualAccountPaymentReceived); err != nil {
		log.Fatal(err)
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// credit 5000.00 NGN
	// test event, skipped: virtual_account.payment_received
}

// Trigger asks the service to send a test event to the endpoint configured
// for the account, to check a receiver end to end.
func ExampleWebhooksService_Trigger() {
	const secret = "whsec_example"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		log.Fatal(err)
	}
	received := make(chan *payments.Event, 1)
	receiver := httptest.NewServer(webhook.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		received <- ev
		return nil
	}))
	defer receiver.Close()

	ctx := context.Background()
	unset := paymentstest.NewServer() // no webhook URL configured
	_, err = unset.Client().Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	fmt.Println(errors.Is(err, payments.CodeWebhookNotConfigured))
	unset.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}})) // the dashboard's setting
	defer srv.Close()
	client := srv.Client()
	res, err := client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked for", res.EventType)
	select {
	case ev := <-received: // delivered asynchronously, signed like any other
		fmt.Println("received", ev.Type, "test:", webhook.Triggered(ev))
	case <-time.After(10 * time.Second):
		fmt.Println("no delivery: check the URL and the secret")
	}
	// Output:
	// true
	// asked for payment.completed
	// received payment.completed test: true
}

// catchUp runs every event created after checkpoint (the id of the last
// event processed; "" for all that the service keeps) through handle, the
// function the webhook handler runs, and returns the new checkpoint. An
// event that also arrives as a delivery has the same id: dedupe on it.
func catchUp(ctx context.Context, client *payments.Client, checkpoint string,
	handle func(context.Context, *payments.Event) error) (string, error) {
	for ev, err := range client.Webhooks.ListEvents(ctx, &payments.EventListParams{After: checkpoint}) {
		if err != nil {
			return checkpoint, err // the events before it are done: resume from checkpoint
		}
		if err := handle(ctx, ev); err != nil {
			return checkpoint, err
		}
		checkpoint = ev.ID
	}
	return checkpoint, nil
}

// ListEvents lists the events a receiver missed, oldest first, as the same
// *Event a delivery gives.
func ExampleWebhooksService_ListEvents() {
	srv := paymentstest.NewServer() // no webhook URL: every delivery is missed
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	show := func(_ context.Context, ev *payments.Event) error {
		fmt.Println(ev.Type)
		return nil
	}

	_, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	checkpoint, err := catchUp(ctx, client, "", show)
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("-- after the checkpoint:")
	if _, err := catchUp(ctx, client, checkpoint, show); err != nil {
		log.Fatal(err)
	}
	// Output:
	// recipient.created
	// recipient.verified
	// -- after the checkpoint:
	// virtual_account.created
}
