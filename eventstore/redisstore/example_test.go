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
	// Dials keep trying, so the client is back at once after a Redis restart.
	opts.Dialer = redisstore.RetryDial(redis.NewDialer(opts))
	opts.ContextTimeoutEnabled = true // the client keeps the store's deadlines itself
	client := redis.NewClient(opts)   // or a ClusterClient, or a FailoverClient
	defer client.Close()

	// Defaults: a lease of 5 s, renewed while your function runs
	// (redisstore.WithLease), a deadline of 2 s per command
	// (redisstore.WithTimeout), ids remembered
	// for 7 days (redisstore.WithRetention), keys "payments:webhook-event:<id>".
	store, err := redisstore.NewClaimStore(client)
	if err != nil {
		log.Fatal(err)
	}
	// Your processing, once per event across the replicas. Make its effects
	// idempotent (keyed on the payment's reference): a replica that dies
	// after them and before the store records the event lets another run it.
	processEvent := func(ctx context.Context, ev *payments.Event) error {
		if webhook.Triggered(ev) || ev.Type != payments.EventPaymentCompleted {
			return nil // a test event from Webhooks.Trigger, or a kind you do not book
		}
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		log.Printf("order %s paid %s %s", p.Reference, p.Amount.StringFixed(2), p.Currency)
		return nil // an error answers 500, and the service retries
	}
	http.Handle("POST /webhooks", webhook.NewHandler(verifier, processEvent,
		webhook.WithClaimStore(store)))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
