package payments_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func ExamplePaymentsService_Initiate() {
	srv := paymentstest.NewServer()
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

	// Initiate only quotes the payment. A key derived from the order makes
	// a repeated call (after a crash, say) unable to create a second payment.
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-1042",
		Description: "Invoice 1042",
	}, payments.WithIdempotencyKey("order-1042-initiate"))
	if err != nil {
		log.Fatal(err)
	}
	q := payment.Quote
	fmt.Println(payment.Reference, payment.Status)
	fmt.Printf("%s %s + fee %s = %s to collect (rate %s)\n",
		q.Amount.StringFixed(2), q.Currency, q.Fee.StringFixed(2), q.TotalAmount.StringFixed(2), q.ExchangeRate)
	fmt.Println("confirm within", q.ExpiresAt.Sub(payment.CreatedAt)) // payments.QuoteLifetime
	// Output:
	// order-1042 pending
	// 15000.50 NGN + fee 225.01 = 15225.51 to collect (rate 1)
	// confirm within 5m0s
}

func ExamplePaymentsService_Confirm() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	limit := payments.Amount{Decimal: decimal.RequireFromString("10000")}
	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		AmountLimit: &limit,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, amount := range []string{"2500", "15000.50"} { // the second is above the limit
		payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount:      payments.Amount{Decimal: decimal.RequireFromString(amount)},
			Currency:    "NGN",
			RecipientID: recipient.ID,
			Reference:   "order-" + amount,
		})
		if err != nil {
			log.Fatal(err)
		}
		payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
		if err != nil {
			log.Fatal(err)
		}
		// A nil error means the service took the confirmation; the status
		// says whether the money moved.
		switch payment.Status {
		case payments.PaymentStatusCompleted:
			fmt.Println(payment.Amount.StringFixed(2), "paid")
		case payments.PaymentStatusRejected, payments.PaymentStatusFailed:
			fmt.Println(payment.Amount.StringFixed(2), "not paid:", payment.Status)
		default: // pending: the payment.* webhooks report the outcome
			fmt.Println(payment.Amount.StringFixed(2), payment.Status)
		}
	}
	// Output:
	// 2500.00 paid
	// 15000.50 not paid: rejected
}
