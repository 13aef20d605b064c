package paymentstest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// A test starts a fake, gets a client wired to it, and checks the server's
// side afterwards.
func Example() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Lovelace",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("1000")},
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-1001",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	q := payment.Quote
	fmt.Println(payment.Status, "fee", q.Fee.StringFixed(2), "total", q.TotalAmount.StringFixed(2), q.Currency)

	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(payment.Status, payment.IsCompleted)
	fmt.Println("payments for order-1001:", len(srv.PaymentsByReference("order-1001")))
	// Output:
	// pending fee 15.00 total 1015.00 NGN
	// completed true
	// payments for order-1001: 1
}

// A test of code that pays: faults on the fake check that retries and lost
// answers never pay twice.
func ExampleNewServer_faults() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4})) // wired to srv, with fast retries
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
	// The next 2 requests fail (the SDK retries), then one does the work and loses the answer.
	for _, f := range []paymentstest.Fault{{Status: http.StatusServiceUnavailable, Times: 2}, {Drop: true, AfterWork: true}} {
		if err := srv.InjectFault(f); err != nil {
			log.Fatal(err)
		}
	}
	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(payment.Status, "payments for order-1042:", len(srv.PaymentsByReference("order-1042")))
	// Output:
	// completed payments for order-1042: 1
}

// faulted counts the requests an injected fault broke.
func faulted(srv *paymentstest.Server) int {
	n := 0
	for _, rec := range srv.Requests() {
		if rec.Fault != "" {
			n++
		}
	}
	return n
}

// Injected faults check that retries never pay twice: a fault breaks the
// next Times requests, in the order the faults were injected.
func ExampleServer_InjectFault() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 5}))
	ctx := context.Background()

	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range []paymentstest.Fault{
		{Status: http.StatusServiceUnavailable, RetryAfter: time.Second},
		{Drop: true},                  // the connection drops before the work
		{Drop: true, AfterWork: true}, // the payment is made, the answer lost
	} {
		if err := srv.InjectFault(f); err != nil {
			log.Fatal(err)
		}
	}

	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("250")}, Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1002",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(payment.Status, "after", faulted(srv), "faults")
	fmt.Println("payments for order-1002:", len(srv.PaymentsByReference("order-1002")))
	// Output:
	// pending after 3 faults
	// payments for order-1002: 1
}

// Advance moves the server's clock, so that quotes expire without waiting.
func ExampleServer_Advance() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	if err != nil {
		log.Fatal(err)
	}
	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("10")}, Currency: "NGN",
		RecipientID: recipient.ID, Reference: "order-1003",
	})
	if err != nil {
		log.Fatal(err)
	}
	srv.Advance(payments.QuoteLifetime)
	_, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
	fmt.Println(errors.Is(err, payments.CodeQuoteExpired))
	// Output: true
}

// Webhooks go to the configured URL, signed; SimulateIncomingPayment plays a
// customer paying into a virtual account.
func ExampleServer_SimulateIncomingPayment() {
	const secret = "whsec_example"
	var mu sync.Mutex
	var received []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := webhook.ConstructEvent(body, r.Header, secret)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		received = append(received, string(ev.Type))
		mu.Unlock()
	}))
	defer receiver.Close()

	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{secret}}))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	account, err := client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.example",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := srv.SimulateIncomingPayment(string(account.AccountNumber), decimal.RequireFromString("5000"), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("received", in.Amount.StringFixed(2), in.Currency, "from", in.PayerName)

	if err := srv.WaitForDeliveries(ctx); err != nil {
		fmt.Println(err)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for _, kind := range received {
		fmt.Println("webhook:", kind)
	}
	// Output:
	// received 5000.00 NGN from Sandbox Payer
	// webhook: virtual_account.created
	// webhook: virtual_account.payment_received
}
