package webhook_test

import (
	"context"
	"log"
	"net/http"
	"os"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// A receiver for a sender that signs with Standard Webhooks. The README's
// "Standard Webhooks" section shows this function's body.
func ExampleNewStandardVerifier() {
	// The endpoint's secret as the sender shows it: "whsec_" and the base64
	// of the key. While it rotates, give the old one and the new one.
	verifier, err := webhook.NewStandardVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
	if err != nil {
		log.Fatal(err)
	}
	// The handler checks webhook-signature and webhook-timestamp (within 5
	// minutes either way), then calls your function once per webhook-id: a
	// retry of an event already processed gets 200 without running it again.
	handler := webhook.NewHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		log.Printf("event %s (%s)", ev.ID, ev.Type)
		return nil // an error answers 500, and the sender retries
	})
	http.Handle("POST /webhooks", handler)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
