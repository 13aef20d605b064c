package payments_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// webhookHandler returns the handler to serve at POST /webhooks: it checks
// each delivery's signature with the endpoint's secret, drops duplicates,
// and calls process once per event.
func webhookHandler(secret string, logger *slog.Logger) (http.Handler, error) {
	verifier, err := payments.NewSignatureVerifier([]string{secret})
	if err != nil {
		return nil, err
	}
	process := func(ctx context.Context, ev *payments.Event) error {
		if ev.Triggered() {
			return nil // a test event from Webhooks.Trigger: acknowledge it, book nothing
		}
		switch ev.Type {
		case payments.EventPaymentCompleted:
			p, err := ev.Payment() // typed: amounts are decimal.Decimal
			if err != nil {
				return err
			}
			return markOrderPaid(ctx, p.Reference, p.Amount) // an error makes the service retry
		}
		return nil // acknowledge kinds you do not handle
	}
	return payments.NewWebhookHandler(verifier, process, payments.WithHandlerLogger(logger)), nil
}

// markOrderPaid stands for your own code, which would record in your
// database that the order is paid; here it prints.
func markOrderPaid(_ context.Context, reference string, amount decimal.Decimal) error {
	fmt.Println(reference, "paid", amount.StringFixed(2))
	return nil
}

func ExampleNewWebhookHandler() {
	const secret = "whsec_example" // the endpoint's signing secret
	handler, err := webhookHandler(secret, slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	receiver := httptest.NewServer(handler) // your server, at the URL the service posts to
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(receiver.URL, secret))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: decimal.RequireFromString("15000.50"), Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1042",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Payments.Confirm(ctx, payment.ConfirmParams()); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		log.Fatal(err)
	}

	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	for _, d := range srv.Deliveries() {
		fmt.Println(d.Event, d.Status, d.Attempts[len(d.Attempts)-1].StatusCode)
	}
	// Output:
	// order-1042 paid 15000.50
	// recipient.created delivered 200
	// recipient.verified delivered 200
	// payment.initiated delivered 200
	// payment.completed delivered 200
	// payment.completed delivered 200
}

// With your own HTTP stack, ConstructEvent verifies and parses the raw body.
func ExampleConstructEvent() {
	const secret = "whsec_example"
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, payments.DefaultMaxWebhookBodyBytes))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		ev, err := payments.ConstructEvent(body, r.Header, secret) // the raw body, before any decoding
		if err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized) // never say why
			return
		}
		if ev.Type == payments.EventVirtualAccountCreated {
			va, err := ev.VirtualAccount()
			if err != nil {
				http.Error(w, "unexpected data", http.StatusInternalServerError) // the service retries
				return
			}
			fmt.Println(ev.Type, va.AccountName)
		}
		// Deduplicate on ev.ID before acting: a delivery may come twice.
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(receiver.URL, secret))
	defer srv.Close()
	ctx := context.Background()
	_, err := srv.Client().VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}

	// A body altered after signing fails verification.
	body := []byte(`{"id":"6b1c","event":"payment.completed","data":{"amount":"1.00"}}`)
	header := http.Header{payments.SignatureHeader: {payments.SignPayload(body, time.Now(), secret)}}
	_, err = payments.ConstructEvent([]byte(`{"id":"6b1c","event":"payment.completed","data":{"amount":"1000.00"}}`), header, secret)
	fmt.Println(errors.Is(err, payments.ErrNoMatchingSignature))
	// Output:
	// virtual_account.created Acme Ltd
	// true
}

// A test event sent by Webhooks.Trigger is recognisable, so a receiver can
// acknowledge it without booking anything.
func ExampleEvent_Triggered() {
	const secret = "whsec_example"
	verifier, err := payments.NewSignatureVerifier([]string{secret})
	if err != nil {
		log.Fatal(err)
	}
	handler := payments.NewWebhookHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		if ev.Triggered() {
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

	srv := paymentstest.NewServer(paymentstest.WithWebhook(receiver.URL, secret))
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
	if _, err := srv.SimulateIncomingPayment(account.AccountNumber, decimal.RequireFromString("5000"), "NGN"); err != nil {
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
	verifier, err := payments.NewSignatureVerifier([]string{secret})
	if err != nil {
		log.Fatal(err)
	}
	received := make(chan *payments.Event, 1)
	receiver := httptest.NewServer(payments.NewWebhookHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		received <- ev
		return nil
	}))
	defer receiver.Close()

	srv := paymentstest.NewServer() // no webhook URL yet
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	fmt.Println(errors.Is(err, payments.CodeWebhookNotConfigured))

	if err := srv.SetWebhook(receiver.URL, secret); err != nil { // the dashboard's setting
		log.Fatal(err)
	}
	res, err := client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked for", res.EventType)
	select {
	case ev := <-received: // delivered asynchronously, signed like any other
		fmt.Println("received", ev.Type, "test:", ev.Triggered())
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
