package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// processEvent is the merchant's EventFunc.
func processEvent(ctx context.Context, ev *payments.Event) error { return nil }

// A receiver that runs on several replicas, sharing one Redis of processed
// events. The README's "Running several replicas" shows this function's
// body.
func Example() {
	verifier, err := webhook.NewSignatureVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
	if err != nil {
		log.Fatal(err)
	}
	opts, err := redis.ParseURL(os.Getenv("REDIS_URL")) // redis://:password@host:6379/0
	if err != nil {
		log.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true // the client keeps the store's deadlines itself
	client := redis.NewClient(opts)   // or a ClusterClient, or a FailoverClient
	defer client.Close()

	// Defaults: a lease of 5 s, renewed while your function runs
	// (redisstore.WithLease), a deadline of 2 s per command
	// (redisstore.WithTimeout), ids remembered
	// for 7 days (redisstore.WithRetention), keys "payments:webhook-event:<id>".
	store, err := redisstore.New(client)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("POST /webhooks", webhook.NewHandler(verifier, processEvent,
		webhook.WithStore(store)))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
