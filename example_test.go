package payments_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The whole journey, on the fake service of paymentstest so that it runs
// without an API key: make a client, save a recipient, quote a payment,
// confirm the quote and check the payment's status. Against the service,
// make the client with NewClientFromEnv (or NewClient) instead.
func Example() {
	ctx := context.Background()
	srv := paymentstest.NewServer() // the fake service, in this process
	defer srv.Close()
	client, err := payments.NewClient(srv.APIKey(), payments.WithBaseURL(srv.URL()))
	if err != nil {
		log.Fatal(err)
	}

	limit := payments.Amount{Decimal: decimal.RequireFromString("250000")}
	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
		AmountLimit:     &limit,
	})
	if err != nil {
		log.Fatal(err)
	}

	// Step 1: a quote, to confirm within payments.QuoteLifetime.
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-1042",
	})
	if err != nil {
		log.Fatal(err)
	}
	q := payment.Quote // also q.ExchangeRate and q.ExpiresAt
	fmt.Println("fee", q.Fee.StringFixed(2), "total", q.TotalAmount.StringFixed(2), q.Currency)

	// Step 2: confirm the quote, which executes the payment.
	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(payment.Reference, payment.Status) // "rejected" above the recipient's limit
	// Output:
	// fee 225.01 total 15225.51 NGN
	// order-1042 completed
}
