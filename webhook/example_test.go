package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// webhookHandler returns the handler to serve at POST /webhooks: it checks
// each delivery's signature with the endpoint's secret, drops duplicates,
// and calls process once per event.
func webhookHandler(secret string, logger *slog.Logger) (http.Handler, error) {
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		return nil, err
	}
	process := func(ctx context.Context, ev *payments.Event) error {
		if webhook.Triggered(ev) {
			return nil // a test event from Webhooks.Trigger: acknowledge it, book nothing
		}
		switch ev.Type {
		case payments.EventPaymentCompleted:
			p, err := ev.Payment() // typed: amounts are decimal.Decimal
			if err != nil {
				return err
			}
			return markOrderPaid(ctx, p.Reference, p.Amount) // an error makes the service retry
		}
		return nil // acknowledge kinds you do not handle
	}
	return webhook.NewHandler(verifier, process, webhook.WithLogger(logger)), nil
}

// markOrderPaid stands for your own code, which would record in your
// database that the order is paid; here it prints.
func markOrderPaid(_ context.Context, reference string, amount decimal.Decimal) error {
	fmt.Println(reference, "paid", amount.StringFixed(2))
	return nil
}

func ExampleNewHandler() {
	const secret = "whsec_example" // the endpoint's signing secret
	handler, err := webhookHandler(secret, slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	receiver := httptest.NewServer(handler) // your server, at the URL the service posts to
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}))
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
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1042",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Payments.Confirm(ctx, payment.ConfirmParams()); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		log.Fatal(err)
	}

	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	for _, d := range srv.Deliveries() {
		fmt.Println(d.Event, d.Status, d.Attempts[len(d.Attempts)-1].StatusCode)
	}
	// Output:
	// order-1042 paid 15000.50
	// recipient.created delivered 200
	// recipient.verified delivered 200
	// payment.initiated delivered 200
	// payment.completed delivered 200
	// payment.completed delivered 200
}

// With your own HTTP stack, ConstructEvent verifies and parses the raw body.
func ExampleConstructEvent() {
	const secret = "whsec_example"
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhook.DefaultMaxBodyBytes))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		ev, err := webhook.ConstructEvent(body, r.Header, secret) // the raw body, before any decoding
		if err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized) // never say why
			return
		}
		if ev.Type == payments.EventVirtualAccountCreated {
			va, err := ev.VirtualAccount()
			if err != nil {
				http.Error(w, "unexpected data", http.StatusInternalServerError) // the service retries
				return
			}
			fmt.Println(ev.Type, va.AccountName)
		}
		// Deduplicate on ev.ID before acting: a delivery may come twice.
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}))
	defer srv.Close()
	ctx := context.Background()
	_, err := srv.Client().VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}

	// A body altered after signing fails verification.
	body := []byte(`{"id":"6b1c","event":"payment.completed","data":{"amount":"1.00"}}`)
	header := http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, time.Now(), secret)}}
	_, err = webhook.ConstructEvent([]byte(`{"id":"6b1c","event":"payment.completed","data":{"amount":"1000.00"}}`), header, secret)
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))
	// Output:
	// virtual_account.created Acme Ltd
	// true
}

// memoryQueue stands for your queue (pgstore.Queue on PostgreSQL): Enqueue
// records each event once, by its id, before it returns.
type memoryQueue struct {
	mu     sync.Mutex
	events map[string]*payments.Event
}

func (q *memoryQueue) Enqueue(_ context.Context, ev *payments.Event) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.events[ev.ID]; !ok { // a duplicate delivery writes nothing
		q.events[ev.ID] = ev
	}
	return nil
}

// Two replicas of a receiver hand every delivery off to one queue; the
// fake delivers to them round robin (Webhook.URLs), as a load balancer
// would. Your workers then take the events from the queue.
func ExampleNewQueueHandler() {
	const secret = "whsec_example"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		log.Fatal(err)
	}
	queue := &memoryQueue{events: map[string]*payments.Event{}}
	var urls []string
	for range 2 {
		replica := httptest.NewServer(webhook.NewQueueHandler(verifier, queue.Enqueue))
		defer replica.Close()
		urls = append(urls, replica.URL)
	}

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URLs: urls, Secrets: []string{secret}}))
	defer srv.Close()
	ctx := context.Background()
	for range 4 {
		if _, err := srv.Client().Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
			log.Fatal(err)
		}
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	perReplica := map[string]int{}
	for _, d := range srv.Deliveries() {
		perReplica[d.URL]++
	}
	fmt.Println(len(queue.events), "events enqueued;", perReplica[urls[0]], "and", perReplica[urls[1]], "deliveries per replica")
	// Output:
	// 4 events enqueued; 2 and 2 deliveries per replica
}
