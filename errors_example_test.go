package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// initiatePayment quotes a payment and turns a failure into what to do
// about it.
func initiatePayment(ctx context.Context, client *payments.Client, params *payments.PaymentInitiateParams) (*payments.Payment, error) {
	payment, err := client.Payments.Initiate(ctx, params)
	var apiErr *payments.APIError
	switch {
	case err == nil:
		return payment, nil
	case errors.Is(err, payments.ErrInvalidParams):
		return nil, fmt.Errorf("a bug in our input, nothing was sent: %w", err)
	case errors.Is(err, payments.CodeDuplicateReference):
		return nil, fmt.Errorf("%s has a payment already: find it, never pay again: %w", params.Reference, err)
	case errors.As(err, &apiErr) && !apiErr.Temporary():
		return nil, fmt.Errorf("refused (quote stan %s to support): %w", apiErr.Stan, err)
	default:
		// The outcome is unknown: the payment may exist. Retry later with
		// the same key, which cannot pay twice; never with a new one.
		key, _ := payments.IdempotencyKeyOf(err)
		return nil, fmt.Errorf("retry later with payments.WithIdempotencyKey(%q): %w", key, err)
	}
}

func ExampleAPIError() {
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
	order := func(ref string) *payments.PaymentInitiateParams {
		return &payments.PaymentInitiateParams{
			Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
			RecipientID: recipient.ID, Reference: ref,
		}
	}
	if _, err := initiatePayment(ctx, client, order("order-1042")); err != nil {
		log.Fatal(err)
	}

	// The same order again: the service refuses it.
	_, err = initiatePayment(ctx, client, order("order-1042"))
	var apiErr *payments.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code, "temporary:", apiErr.Temporary())
	}

	// The service fails every attempt: the outcome is unknown.
	if err := srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 3}); err != nil {
		panic(err)
	}
	_, err = initiatePayment(ctx, client, order("order-1043"))
	key, _ := payments.IdempotencyKeyOf(err)
	// Later, the same call with the same key.
	payment, err := client.Payments.Initiate(ctx, order("order-1043"), payments.WithIdempotencyKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(payment.Reference, payment.Status, "payments:", len(srv.PaymentsByReference("order-1043")))
	// Output:
	// 422 duplicate_reference temporary: false
	// order-1043 pending payments: 1
}

// Error codes are errors: match them with errors.Is.
func ExampleErrorCode() {
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
	params := &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("2500")}, Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1042",
	}
	for range 2 {
		_, err = client.Payments.Initiate(ctx, params)
		switch {
		case err == nil:
			fmt.Println("quoted", params.Reference)
		case errors.Is(err, payments.CodeDuplicateReference):
			fmt.Println(params.Reference, "has a payment already: find it, never pay again")
		default:
			log.Fatal(err)
		}
	}
	fmt.Println(errors.Is(err, payments.ErrUnprocessable)) // the status sentinel matches too
	// Output:
	// quoted order-1042
	// order-1042 has a payment already: find it, never pay again
	// true
}

func ExampleValidationError() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()

	// Nothing is sent: every bad field is reported at once.
	_, err := client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		AccountName: "Ada Okafor",
		Email:       "ada@",
	})
	var verr *payments.ValidationError
	if errors.As(err, &verr) {
		for _, f := range verr.Fields {
			fmt.Printf("%s: %s\n", f.Field, f.Message)
		}
	}
	fmt.Println(errors.Is(err, payments.ErrInvalidParams), "requests sent:", len(srv.Requests()))
	// Output:
	// email: is not a valid email address
	// first_name: is required
	// last_name: is required
	// true requests sent: 0
}

// A call whose answer never came may have worked: retry it with its key.
func ExampleIdempotencyKeyOf() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	params := &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}

	if err := srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 3}); err != nil {
		panic(err)
	} // the recipient is created, every answer lost
	_, err := client.Recipients.Create(ctx, params)
	var terr *payments.TransportError
	fmt.Println("transport error:", errors.As(err, &terr))

	// Store the key with the task, and retry later with it.
	key, ok := payments.IdempotencyKeyOf(err)
	if !ok {
		log.Fatal(err)
	}
	recipient, err := client.Recipients.Create(ctx, params, payments.WithIdempotencyKey(key))
	if err != nil {
		log.Fatal(err)
	}
	created := 0
	for _, ev := range srv.Events() {
		if ev.Type == payments.EventRecipientCreated {
			created++
		}
	}
	fmt.Println(recipient.AccountName, "recipients created on the service:", created)
	// Output:
	// transport error: true
	// Ada Okafor recipients created on the service: 1
}
