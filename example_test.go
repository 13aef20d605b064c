package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// examplePaymentsAPI stands in for the Payments API in the examples: it
// answers each operation with a canned envelope.
func examplePaymentsAPI() *httptest.Server {
	reply := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /payments/recipients", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusCreated, okEnvelope(recipientJSON))
	})
	mux.HandleFunc("PUT /payments/recipients/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != recipientUUID {
			reply(w, http.StatusNotFound, `{"success":false,"message":"Recipient not found","stan":"`+stanUUID+`","code":"not_found"}`)
			return
		}
		reply(w, http.StatusOK, okEnvelope(recipientJSON))
	})
	mux.HandleFunc("POST /payments/initiate", func(w http.ResponseWriter, r *http.Request) {
		expires := time.Now().Add(payments.QuoteLifetime).UTC().Format(time.RFC3339)
		reply(w, http.StatusOK, okEnvelope(`{"id":"`+paymentUUID+`","reference":"order-1042","status":"pending",
			"amount":"15000.50","currency":"NGN","quote":{"quote_id":"`+quoteUUID+`","amount":"15000.50",
			"fee":"25.00","exchange_rate":"1","total_amount":"15025.50","currency":"NGN","expires_at":"`+expires+`"}}`))
	})
	mux.HandleFunc("POST /payments/confirm", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, okEnvelope(confirmedPaymentJSON))
	})
	return httptest.NewServer(mux)
}

func ExampleNewClient() {
	client, err := payments.NewClient("sk_test_example",
		payments.WithBaseURL("https://sandbox.payments.example"),
		payments.WithUserAgent("acme-checkout/2.3"),
		payments.WithMaxRetries(3),
		payments.WithRetryWait(200*time.Millisecond, 5*time.Second),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = client // share one client across the application

	// A bearer token is never sent in clear text.
	_, err = payments.NewClient("sk_test_example", payments.WithBaseURL("http://sandbox.payments.example"))
	fmt.Println(errors.Is(err, payments.ErrInvalidConfig))
	// Output: true
}

func ExampleRecipientsService_Create() {
	api := examplePaymentsAPI()
	defer api.Close()
	client, err := payments.NewClient("sk_test_example", payments.WithBaseURL(api.URL))
	if err != nil {
		log.Fatal(err)
	}

	limit := decimal.RequireFromString("250000")
	recipient, err := client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
		AmountLimit:     &limit,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("id:", recipient.ID)
	fmt.Println("limit:", recipient.Limit)
	fmt.Println("stan:", recipient.LastResponse().Stan)
	// Output:
	// id: 3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11
	// limit: 250000
	// stan: 7c9e6679-7425-40de-944b-e07fc1f90ae7
}

func ExamplePaymentsService_Initiate() {
	api := examplePaymentsAPI()
	defer api.Close()
	client, err := payments.NewClient("sk_test_example", payments.WithBaseURL(api.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Step 1: a quote. The key derived from the order makes a repeated call
	// (after a crash, say) unable to create a second payment.
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      decimal.RequireFromString("15000.50"),
		Currency:    "NGN",
		RecipientID: "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11",
		Reference:   "order-1042",
	}, payments.WithIdempotencyKey("order-1042-initiate"))
	if err != nil {
		log.Fatal(err)
	}
	q := payment.Quote
	fmt.Printf("fee %s, total %s %s\n", q.Fee, q.TotalAmount, q.Currency)

	// Step 2: confirm it within payments.QuoteLifetime.
	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(payment.Reference, payment.Status)
	// Output:
	// fee 25, total 15025.5 NGN
	// order-1042 completed
}

func ExampleAPIError() {
	api := examplePaymentsAPI()
	defer api.Close()
	client, err := payments.NewClient("sk_test_example", payments.WithBaseURL(api.URL))
	if err != nil {
		log.Fatal(err)
	}

	_, err = client.Recipients.Update(context.Background(), "00000000-0000-4000-8000-000000000000",
		&payments.RecipientUpdateParams{AccountName: "Ada N. Okafor"})

	var apiErr *payments.APIError
	switch {
	case errors.Is(err, payments.ErrNotFound) && errors.As(err, &apiErr):
		fmt.Printf("%d %s (code %s, stan %s)\n", apiErr.StatusCode, apiErr.Message, apiErr.Code, apiErr.Stan)
	case err != nil:
		log.Fatal(err)
	}
	// Output: 404 Recipient not found (code not_found, stan 7c9e6679-7425-40de-944b-e07fc1f90ae7)
}

func ExampleValidationError() {
	client, err := payments.NewClient("sk_test_example", payments.WithBaseURL("https://sandbox.payments.example"))
	if err != nil {
		log.Fatal(err)
	}

	// Nothing is sent: every bad field is reported at once.
	_, err = client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
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
	// Output:
	// email: is not a valid email address
	// first_name: is required
	// last_name: is required
}

func ExampleIdempotencyKeyOf() {
	api := examplePaymentsAPI()
	api.Close() // the service is unreachable
	client, err := payments.NewClient("sk_test_example", payments.WithBaseURL(api.URL), payments.WithMaxRetries(0))
	if err != nil {
		log.Fatal(err)
	}

	_, err = client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}, payments.WithIdempotencyKey("customer-77-recipient"))

	// The request may or may not have arrived: store the key and retry later
	// with payments.WithIdempotencyKey(key); it cannot create a second recipient.
	if key, ok := payments.IdempotencyKeyOf(err); ok {
		fmt.Println("retry later with", key)
	}
	// Output: retry later with customer-77-recipient
}
