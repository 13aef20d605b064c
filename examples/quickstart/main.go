// Command quickstart runs the whole merchant journey with the payments SDK
// and prints what happens at each step: create a recipient, edit it, open a
// virtual account, receive a payment into it, initiate a payment, show its
// quote, confirm it, and receive and verify each webhook.
//
// With no PAYMENTS_API_KEY set it starts the fake service of paymentstest in
// process, plus a webhook receiver built on webhook.NewHandler, so it
// runs anywhere:
//
//	go run ./examples/quickstart
//
// With PAYMENTS_API_KEY and PAYMENTS_BASE_URL set it runs against the real
// service instead (webhooks then go to the URL in your dashboard):
//
//	PAYMENTS_API_KEY=... PAYMENTS_BASE_URL=https://... go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// journey is what the steps need: a client, where to write, and, when the
// fake service runs in process, the extras only it can do.
type journey struct {
	client *payments.Client
	out    io.Writer
	local  *local // nil against the real service
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	j := &journey{out: out}
	if os.Getenv("PAYMENTS_API_KEY") == "" {
		l, err := startLocal(out)
		if err != nil {
			return err
		}
		defer l.close()
		j.local, j.client = l, l.client
	} else {
		client, err := payments.NewClientFromEnv(payments.WithUserAgent("quickstart-example"))
		if err != nil {
			return fmt.Errorf("configure the client: %w", err)
		}
		fmt.Fprintf(out, "Running against the service at %s\n", os.Getenv("PAYMENTS_BASE_URL"))
		j.client = client
	}
	return j.steps(ctx)
}

func (j *journey) steps(ctx context.Context) error {
	j.step(1, "Save a recipient")
	// The SDK sends an Idempotency-Key with the create and reuses it on
	// every retry, so a flaky network cannot create the recipient twice.
	limit := payments.Amount{Decimal: decimal.RequireFromString("250000")}
	params := &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "Example Bank",
		AccountBankCode:    "058",
		AmountLimit:        &limit,
	}
	recipient, err := j.client.Recipients.Create(ctx, params)
	if err != nil {
		return explain("create recipient", err)
	}
	j.say("recipient %s: %s, %s, limit %s", recipient.ID, recipient.AccountName, recipient.AccountCurrency, moneyOrNone(recipient.Limit))
	key := recipient.LastResponse().IdempotencyKey
	j.say("idempotency key %s, stan %s", key, recipient.LastResponse().Stan)
	// Sending the same create again with the same key (as a retry after a
	// timeout would) returns the first answer instead of a second recipient.
	again, err := j.client.Recipients.Create(ctx, params, payments.WithIdempotencyKey(key))
	if err != nil {
		return explain("repeat the create", err)
	}
	j.say("the same create sent again with that key returns the same recipient: %t", again.ID == recipient.ID)
	j.webhooks(ctx)

	j.step(2, "Edit the recipient")
	recipient, err = j.client.Recipients.Update(ctx, recipient.ID, &payments.RecipientUpdateParams{
		AccountName: "Ada N. Okafor",
	})
	if err != nil {
		return explain("edit recipient", err)
	}
	j.say("account name is now %q", recipient.AccountName)

	j.step(3, "Open a virtual account")
	account, err := j.client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
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
	j.say("account %s at %s (%s), active: %t", account.AccountNumber, account.BankName, account.Currency, account.IsActive)
	j.webhooks(ctx)

	j.step(4, "Receive a payment into the virtual account")
	if j.local == nil {
		j.say("skipped: against the real service a customer pays in; watch for virtual_account.payment_received")
	} else {
		in, err := j.local.payIn(string(account.AccountNumber), decimal.RequireFromString("50000"), account.Currency)
		if err != nil {
			return err
		}
		j.say("%s paid %s %s in (reference %s)", in.PayerName, in.Amount.StringFixed(2), in.Currency, in.Reference)
		j.webhooks(ctx)
	}

	j.step(5, "Initiate a payment (this only creates a quote)")
	payment, err := j.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: recipient.ID,
		Reference:   "order-" + uuid.NewString(),
		Description: "Invoice 1042",
	})
	if err != nil {
		return explain("initiate payment", err)
	}
	q := payment.Quote
	j.say("payment %s is %s; quote %s:", payment.ID, payment.Status, q.QuoteID)
	j.say("  amount %s %s + fee %s = total to collect %s (exchange rate %s)",
		q.Amount.StringFixed(2), q.Currency, q.Fee.StringFixed(2), q.TotalAmount.StringFixed(2), q.ExchangeRate)
	j.say("  confirm before %s", q.ExpiresAt.Format(time.RFC3339))
	j.webhooks(ctx)

	j.step(6, "Confirm the quote (this executes the payment)")
	payment, err = j.client.Payments.Confirm(ctx, payment.ConfirmParams())
	if err != nil {
		return explain("confirm payment", err)
	}
	j.say("payment %s is %s (completed: %t)", payment.ID, payment.Status, payment.IsCompleted)
	j.webhooks(ctx)

	fmt.Fprintln(j.out, "\nDone.")
	return nil
}

func (j *journey) step(n int, title string) { fmt.Fprintf(j.out, "\n%d. %s\n", n, title) }

func (j *journey) say(format string, args ...any) {
	fmt.Fprintf(j.out, "   "+format+"\n", args...)
}

// moneyOrNone prints an optional amount. Money is printed with two decimals
// (StringFixed(2)): decimal's String trims zeros, so 15000.50 would print as
// 15000.5.
func moneyOrNone(d *decimal.Decimal) string {
	if d == nil {
		return "none"
	}
	return d.StringFixed(2)
}

// webhooks prints the webhooks received and verified since the last call,
// when the fake service runs in process.
func (j *journey) webhooks(ctx context.Context) {
	if j.local == nil {
		return
	}
	for _, line := range j.local.received(ctx) {
		j.say("webhook %s", line)
	}
}
