package webhook_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// reconcileFrom runs through h, the handler serving POST /webhooks, every
// event listed after checkpoint (an event id; "" for the last day) that no
// delivery processed, and returns the checkpoint to store for next time.
// Safe on every replica at once: the handler's store processes each event
// once, whether a delivery or a reconcile brings it.
func reconcileFrom(ctx context.Context, h *webhook.Handler, client *payments.Client, checkpoint string) (string, error) {
	params := &payments.EventListParams{After: checkpoint}
	if checkpoint == "" {
		params.Since = time.Now().Add(-24 * time.Hour) // within the store's retention
	}
	res, err := h.Reconcile(ctx, client.Webhooks.ListEvents(ctx, params))
	if !res.Checkpoint.IsZero() {
		checkpoint = res.Checkpoint.ID // never past an event that failed or is still running
	}
	if res.Failed > 0 {
		log.Printf("reconcile: %d events failed (%v); the next run tries them again", res.Failed, res.FailedIDs)
	}
	return checkpoint, err // a listing error comes with what was done before it
}

func ExampleHandler_Reconcile() {
	srv := paymentstest.NewServer() // no webhook URL: every event is missed
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
		Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1042",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Payments.Confirm(ctx, payment.ConfirmParams()); err != nil {
		log.Fatal(err)
	}

	verifier, err := webhook.NewSignatureVerifier([]string{"whsec_example"})
	if err != nil {
		log.Fatal(err)
	}
	h := webhook.NewHandler(verifier, func(_ context.Context, ev *payments.Event) error {
		fmt.Println("processed", ev.Type)
		return nil
	})
	checkpoint, err := reconcileFrom(ctx, h, client, "")
	if err != nil {
		log.Fatal(err)
	}
	events := srv.Events()
	fmt.Println("checkpoint at the last event:", checkpoint == events[len(events)-1].ID)
	again, err := reconcileFrom(ctx, h, client, checkpoint)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nothing new, checkpoint kept:", again == checkpoint)
	// Output:
	// processed recipient.created
	// processed recipient.verified
	// processed payment.initiated
	// processed payment.completed
	// checkpoint at the last event: true
	// nothing new, checkpoint kept: true
}
