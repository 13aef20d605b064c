package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// newBulkClient makes the one Client that all the goroutines of a bulk job
// share: its retry budget and rate limit are the Client's, so they hold
// over the whole job.
func newBulkClient(apiKey, baseURL string) (*payments.Client, error) {
	budget := payments.DefaultRetryBudget() // on by default: 500 tokens, 5 a retry, 10 after a timeout, 1 back per success
	budget.Tokens = 1000                    // a larger reserve for a longer job
	return payments.NewClient(apiKey,
		payments.WithBaseURL(baseURL),
		payments.WithRetryBudget(&budget),
		payments.WithRateLimit(50, 10), // at most 50 requests a second over all goroutines, in bursts of 10
	)
}

// A bulk job's Client: when the service fails for everyone, the budget
// empties and calls that would retry fail at once, saying so, with the key
// to repeat them with later.
func ExampleWithRetryBudget() {
	ctx := context.Background()
	srv := paymentstest.NewServer()
	defer srv.Close()
	client, err := newBulkClient(srv.APIKey(), srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Recipients.Create(ctx, validRecipientParams()); err == nil {
		fmt.Println("created")
	}

	// A budget of one retry, during an outage.
	client = srv.Client(payments.WithRetryBudget(&payments.RetryBudget{Tokens: 5, RetryCost: 5, TimeoutCost: 5}))
	if err := srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 10}); err != nil {
		panic(err)
	}
	for _, key := range []string{"payout-41-recipient", "payout-42-recipient"} {
		_, err := client.Recipients.Create(ctx, validRecipientParams(), payments.WithIdempotencyKey(key))
		var apiErr *payments.APIError
		if errors.As(err, &apiErr) && errors.Is(err, payments.ErrRetryBudgetExhausted) {
			key, _ := payments.IdempotencyKeyOf(err)
			fmt.Printf("HTTP %d after %d attempt(s), not retried: repeat later with key %s\n", apiErr.StatusCode, apiErr.Attempts, key)
		}
	}
	// Output:
	// created
	// HTTP 503 after 2 attempt(s), not retried: repeat later with key payout-41-recipient
	// HTTP 503 after 1 attempt(s), not retried: repeat later with key payout-42-recipient
}
