package paymentstest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The test values take a merchant's code down its failure paths: a payment
// that fails when confirmed, and a recipient that fails verification.
func Example_testValues() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	params := &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}
	good, err := client.Recipients.Create(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString(paymentstest.AmountFails)}, Currency: "NGN",
		RecipientID: good.ID, Reference: "order-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	p, err = client.Payments.Confirm(ctx, p.ConfirmParams())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("payment:", p.Status)

	params.AccountNumber = paymentstest.AccountNumberFailsVerification
	bad, err := client.Recipients.Create(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("100")}, Currency: "NGN", RecipientID: bad.ID, Reference: "order-2",
	})
	fmt.Println("unverified recipient refused:", errors.Is(err, payments.CodeRecipientVerificationFailed))
	for _, ev := range srv.Events() {
		fmt.Println(ev.Type)
	}
	// Output:
	// payment: failed
	// unverified recipient refused: true
	// recipient.created
	// recipient.verified
	// payment.initiated
	// payment.failed
	// recipient.created
	// recipient.verification_failed
}
