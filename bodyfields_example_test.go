package payments_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// initiatePayroll quotes a salary payment with a field the service requires
// that this SDK does not know yet ("purpose_code" here): WithBodyField adds
// it to the body, checked as JSON before anything is sent.
func initiatePayroll(ctx context.Context, client *payments.Client, recipientID, payoutID string) (*payments.Payment, error) {
	return client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("250000")},
		Currency:    "NGN",
		RecipientID: recipientID,
		Reference:   payoutID,
	},
		payments.WithBodyField("purpose_code", "SALA"),
		payments.WithIdempotencyKey(payoutID+"-initiate"),
	)
}

func ExampleWithBodyField() {
	ctx := context.Background()
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	recipient, err := client.Recipients.Create(ctx, validRecipientParams())
	if err != nil {
		log.Fatal(err)
	}
	payment, err := initiatePayroll(ctx, client, recipient.ID, "payroll-2025-03-0007")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(payment.Reference, payment.Status)
	// Output:
	// payroll-2025-03-0007 pending
}
