package payments_test

import (
	"context"
	"fmt"
	"log"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func ExampleVirtualAccountsService_Create() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()

	// The service gives this call no Idempotency-Key: pass your own to make
	// it safe to retry, or it is not retried.
	account, err := client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		AccountName: "Ada Okafor Collections",
		Email:       "ada@example.com",
		FirstName:   "Ada",
		LastName:    "Okafor",
		BVN:         "12345678901", // required for Nigerian accounts
		Metadata:    &payments.VirtualAccountMetadata{Country: "NG", UseCase: "collections"},
	}, payments.WithIdempotencyKey("customer-77-collections"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(account.AccountName, account.Currency, "active:", account.IsActive)
	fmt.Println("account number of", len(account.AccountNumber), "digits to share with the customer")
	// Output:
	// Ada Okafor Collections NGN active: true
	// account number of 10 digits to share with the customer
}
