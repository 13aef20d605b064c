package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// demoRows saves n recipients on the service (the sandbox or the fake: the
// account numbers are made up) and returns a payout to each. A few rows use
// the sandbox's test values, so that the report shows every final state:
// of every 25 rows, the 8th fails (paymentstest.AmountFails), the 14th is
// rejected (AmountRejected), the 20th completes only after it was pending
// (AmountCompletesLate), and the 23rd goes to a recipient that fails
// verification, so it is refused (AccountNumberFailsVerification).
func demoRows(ctx context.Context, c *payments.Client, n int) ([]row, error) {
	rows := make([]row, n)
	for i := range rows {
		account := fmt.Sprintf("90%08d", i)
		if i%25 == 22 {
			account = paymentstest.AccountNumberFailsVerification
		}
		r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
			AccountNumber:   payments.AccountNumber(account),
			AccountName:     fmt.Sprintf("Demo payee %d", i+1),
			AccountType:     payments.AccountTypeIndividual,
			AccountCurrency: "NGN",
		})
		if err != nil {
			return nil, fmt.Errorf("creating demo recipient %d of %d: %w", i+1, n, err)
		}
		amount := decimal.New(int64(1000+(i*7919)%90000), -2) // 10.00 to 909.99
		switch i % 25 {
		case 7:
			amount = decimal.RequireFromString(paymentstest.AmountFails)
		case 13:
			amount = decimal.RequireFromString(paymentstest.AmountRejected)
		case 19:
			amount = decimal.RequireFromString(paymentstest.AmountCompletesLate)
		}
		rows[i] = row{RecipientID: r.ID, Amount: amount, Currency: "NGN", PayoutID: fmt.Sprintf("payout-%05d", i+1)}
	}
	return rows, nil
}

// writeDemo makes a demo payouts file of n rows at path (-demo-csv n): it
// never overwrites a file, since a payouts file names real payments.
func writeDemo(ctx context.Context, c *payments.Client, n int, path string) error {
	if path == "" {
		return errors.New("-demo-csv needs -csv, the file to write")
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: -demo-csv writes a new file only", path)
	}
	rows, err := demoRows(ctx, c, n)
	if err != nil {
		return err
	}
	return writeRows(path, rows)
}
