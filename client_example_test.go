package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func ExampleNewClient() {
	apiKey := "sk_test_example" // in production, from your secret store
	client, err := payments.NewClient(apiKey,
		payments.WithBaseURL("https://sandbox.payments.example"), // no default is published
		payments.WithUserAgent("acme-checkout/2.3"),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4}),
		payments.WithRetries(payments.RetryPolicy{WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client) // never the API key

	// The bearer token is never sent in clear text.
	_, err = payments.NewClient(apiKey, payments.WithBaseURL("http://sandbox.payments.example"))
	fmt.Println(errors.Is(err, payments.ErrInvalidConfig))
	// Output:
	// payments.Client(https://sandbox.payments.example)
	// true
}

// A deployment sets PAYMENTS_API_KEY and PAYMENTS_BASE_URL; here they point
// at the fake service.
func ExampleNewClientFromEnv() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	os.Setenv("PAYMENTS_API_KEY", srv.APIKey())
	os.Setenv("PAYMENTS_BASE_URL", srv.URL())
	defer os.Unsetenv("PAYMENTS_API_KEY")
	defer os.Unsetenv("PAYMENTS_BASE_URL")

	client, err := payments.NewClientFromEnv(payments.WithUserAgent("acme-checkout/2.3"))
	if err != nil {
		log.Fatal(err)
	}
	account, err := client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness,
		AccountName: "Acme Ltd",
		Email:       "ops@acme.example",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(account.AccountName, account.Currency)

	// Plain http to a host that is not loopback, such as a sandbox container,
	// needs PAYMENTS_INSECURE_PLAIN_HTTP=1: the key travels in clear text.
	os.Setenv("PAYMENTS_BASE_URL", "http://sandbox:8765")
	_, err = payments.NewClientFromEnv()
	fmt.Println(errors.Is(err, payments.ErrInvalidConfig))
	os.Setenv("PAYMENTS_INSECURE_PLAIN_HTTP", "1")
	defer os.Unsetenv("PAYMENTS_INSECURE_PLAIN_HTTP")
	client, err = payments.NewClientFromEnv()
	fmt.Println(client, err)
	// Output:
	// Acme Ltd NGN
	// true
	// payments.Client(http://sandbox:8765) <nil>
}

// renameRecipient calls PUT /payments/recipients/{id} through Client.Do, as
// you would call an operation the SDK does not type yet.
func renameRecipient(ctx context.Context, client *payments.Client, id, name string) (map[string]any, error) {
	var recipient map[string]any // decoded from the envelope's data member
	_, err := client.Do(ctx, http.MethodPut, "/payments/recipients/"+url.PathEscape(id),
		map[string]any{"account_name": name}, &recipient)
	return recipient, err
}

func ExampleClient_Do() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	created, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	recipient, err := renameRecipient(ctx, client, created.ID, "Ada N. Okafor")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(recipient["account_name"])

	// Do fails as every call does: typed errors, matched with errors.Is.
	_, err = renameRecipient(ctx, client, "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", "Nobody")
	fmt.Println(errors.Is(err, payments.ErrNotFound), errors.Is(err, payments.CodeNotFound))
	// Output:
	// Ada N. Okafor
	// true true
}

// quoteOrder quotes the payment of an order. The idempotency key comes from
// the order, so a call repeated after a crash or a timeout replays the first
// answer instead of creating a second payment.
func quoteOrder(ctx context.Context, client *payments.Client, orderID, recipientID, requestID string) (*payments.Payment, error) {
	return client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: recipientID,
		Reference:   "order-" + orderID,
	},
		payments.WithIdempotencyKey("order-"+orderID+"-initiate"), // your own key, stable across restarts
		payments.WithHeader("X-Request-Id", requestID),
	)
}

func ExampleWithIdempotencyKey() {
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
	first, err := quoteOrder(ctx, client, "1042", recipient.ID, "req-1")
	if err != nil {
		log.Fatal(err)
	}
	// The process restarts and quotes the same order again.
	again, err := quoteOrder(ctx, client, "1042", recipient.ID, "req-2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("key:", again.LastResponse().IdempotencyKey)
	fmt.Println("same payment:", again.ID == first.ID)
	fmt.Println("payments for order-1042:", len(srv.PaymentsByReference("order-1042")))
	// Output:
	// key: order-1042-initiate
	// same payment: true
	// payments for order-1042: 1
}

// Middleware sees every HTTP attempt, retries included.
func ExampleWithMiddleware() {
	srv := paymentstest.NewServer()
	defer srv.Close()

	logAttempts := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		attempt, _ := payments.AttemptFromContext(req.Context())
		req.Header.Set("X-Request-Id", "req-7f3a") // or trace context
		resp, err := next(req)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%s attempt %d: %d\n", attempt.Name, attempt.Number, resp.StatusCode)
		return resp, nil
	}
	client := srv.Client(payments.WithMiddleware(logAttempts)) // every call of this client

	if err := srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}); err != nil {
		panic(err)
	}
	_, err := client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// recipients.create attempt 1: 503
	// recipients.create attempt 2: 201
}

// An attempt that takes too long is abandoned and retried; the context
// bounds the whole call.
func ExampleWithRetries() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	// The service hangs on the next update.
	err = srv.InjectFault(paymentstest.Fault{Latency: time.Minute, Times: 1, Method: http.MethodPut})
	if err != nil {
		log.Fatal(err)
	}
	recipient, err = client.Recipients.Update(ctx, recipient.ID, &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor"},
		payments.WithRetries(payments.RetryPolicy{AttemptTimeout: 300 * time.Millisecond}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(recipient.AccountName, "after", recipient.LastResponse().Attempts, "attempts")
	// Output: Ada N. Okafor after 2 attempts
}
