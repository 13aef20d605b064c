package payments_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func ExampleRecipientsService_Create() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()

	limit := payments.Amount{Decimal: decimal.RequireFromString("250000")}
	recipient, err := client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankCode:    "058",
		AmountLimit:        &limit, // caps every payment to this recipient
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(recipient.AccountName, recipient.AccountCurrency, "limit", recipient.Limit.StringFixed(2))
	// An Idempotency-Key went out (a random one: see WithIdempotencyKey),
	// so a retried create never makes a second recipient.
	fmt.Println("status", recipient.LastResponse().StatusCode, "key sent:", recipient.LastResponse().IdempotencyKey != "")
	// Output:
	// Ada Okafor NGN limit 250000.00
	// status 201 key sent: true
}

func ExampleRecipientsService_Update() {
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
	// Fields left empty keep their value.
	limit := payments.Amount{Decimal: decimal.RequireFromString("500000")}
	recipient, err = client.Recipients.Update(ctx, recipient.ID, &payments.RecipientUpdateParams{
		AccountName: "Ada N. Okafor",
		AmountLimit: &limit,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(recipient.AccountName, recipient.AccountCurrency, "limit", recipient.Limit.StringFixed(2))
	// Output: Ada N. Okafor NGN limit 500000.00
}
