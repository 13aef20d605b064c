// Command quickstart runs the whole merchant journey with the payments SDK:
// create a recipient, edit it, open a virtual account, initiate a payment,
// print its quote and confirm it.
//
// It talks to the service at PAYMENTS_BASE_URL with the key in
// PAYMENTS_API_KEY:
//
//	PAYMENTS_API_KEY=... PAYMENTS_BASE_URL=https://... go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	client, err := payments.NewClientFromEnv(payments.WithUserAgent("quickstart-example"))
	if err != nil {
		log.Fatalf("configure the client: %v", err)
	}
	if err := run(ctx, client); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, client *payments.Client) error {
	// 1. Save a recipient. The SDK sends an Idempotency-Key with the create
	//    and reuses it on every retry, so a flaky network cannot create two.
	limit := decimal.RequireFromString("250000")
	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "Example Bank",
		AccountBankCode:    "058",
		AmountLimit:        &limit,
	})
	if err != nil {
		return explain("create recipient", err)
	}
	fmt.Printf("1. recipient %s created (idempotency key %s, stan %s)\n",
		recipient.ID, recipient.LastResponse().IdempotencyKey, recipient.LastResponse().Stan)

	// 2. Edit it: only the fields you set are sent.
	recipient, err = client.Recipients.Update(ctx, recipient.ID, &payments.RecipientUpdateParams{
		AccountName: "Ada N. Okafor",
	})
	if err != nil {
		return explain("edit recipient", err)
	}
	fmt.Printf("2. recipient renamed to %q\n", recipient.AccountName)

	// 3. Open a virtual account that customers can pay into.
	account, err := client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		AccountName: "Ada Okafor Collections",
		Email:       "ada@example.com",
		FirstName:   "Ada",
		LastName:    "Okafor",
		BVN:         "12345678901",
		Metadata:    &payments.VirtualAccountMetadata{Country: "NG", UseCase: "collections"},
	})
	if err != nil {
		return explain("open virtual account", err)
	}
	fmt.Printf("3. virtual account %s at %s opened (%s)\n", account.AccountNumber, account.BankName, account.Currency)

	// 4. Initiate a payment: this only creates a quote.
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      decimal.RequireFromString("15000.50"),
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-" + uuid.NewString(),
		Description: "Invoice 1042",
	})
	if err != nil {
		return explain("initiate payment", err)
	}
	q := payment.Quote
	fmt.Printf("4. quote %s: amount %s %s, fee %s, rate %s, total to collect %s, expires %s\n",
		q.ID, q.Amount, q.Currency, q.Fee, q.ExchangeRate, q.TotalAmount, q.ExpiresAt.Format(time.RFC3339))

	// 5. Confirm the quote before it expires: this executes the payment.
	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		return explain("confirm payment", err)
	}
	fmt.Printf("5. payment %s is %s (completed: %t)\n", payment.ID, payment.Status, payment.IsCompleted)
	return nil
}

// explain turns an SDK error into a message that says what to do about it.
func explain(step string, err error) error {
	var (
		valErr *payments.ValidationError
		apiErr *payments.APIError
	)
	switch {
	case errors.As(err, &valErr):
		return fmt.Errorf("%s: fix the input, nothing was sent: %w", step, err)
	case errors.Is(err, payments.ErrUnauthorized):
		fmt.Fprintln(os.Stderr, "check PAYMENTS_API_KEY")
	case errors.Is(err, payments.ErrQuoteExpired):
		return fmt.Errorf("%s: the quote expired; initiate again: %w", step, err)
	case errors.As(err, &apiErr):
		return fmt.Errorf("%s: the service refused (stan %s): %w", step, apiErr.Stan, err)
	}
	if key, ok := payments.IdempotencyKeyOf(err); ok {
		return fmt.Errorf("%s: retry later with WithIdempotencyKey(%q): %w", step, key, err)
	}
	return fmt.Errorf("%s: %w", step, err)
}
