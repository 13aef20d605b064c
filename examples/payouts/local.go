package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// local is the fake service in this process, with recipients to pay and a
// file of payouts to them.
type local struct {
	srv    *paymentstest.Server
	client *payments.Client
	dir    string
}

// startLocal starts the fake service, saves a few recipients and writes a
// payouts file of cfg.rows rows to them, into a new directory that also
// holds the journal (the fake forgets everything when the program ends, so
// a journal of an earlier run would name payments it never made).
func startLocal(ctx context.Context, cfg *config, opts []payments.Option) (*local, error) {
	dir, err := os.MkdirTemp("", "payouts-")
	if err != nil {
		return nil, err
	}
	srv := paymentstest.NewServer()
	l := &local{srv: srv, client: srv.Client(opts...), dir: dir}
	var recipients []string
	for i := range 10 {
		r, err := l.client.Recipients.Create(ctx, &payments.RecipientCreateParams{
			AccountNumber:   payments.AccountNumber(fmt.Sprintf("01234567%02d", i)),
			AccountName:     fmt.Sprintf("Payee %d", i),
			AccountType:     payments.AccountTypeIndividual,
			AccountCurrency: "NGN",
		})
		if err != nil {
			l.close()
			return nil, err
		}
		recipients = append(recipients, r.ID)
	}
	rows := make([]row, cfg.rows)
	for i := range rows {
		rows[i] = row{
			RecipientID: recipients[i%len(recipients)],
			Amount:      decimal.New(int64(1000+(i*7919)%90000), -2), // 10.00 to 909.99
			Currency:    "NGN",
			PayoutID:    fmt.Sprintf("payout-%05d", i+1),
		}
	}
	cfg.csvPath, cfg.journalPath = filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	if err := writeRows(cfg.csvPath, rows); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *local) close() {
	l.srv.Close()
	os.RemoveAll(l.dir)
}
