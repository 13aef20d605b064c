package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shopspring/decimal"
)

// row is one payout of the CSV file.
type row struct {
	RecipientID string
	Amount      decimal.Decimal
	Currency    string
	// PayoutID is the merchant's own id of the payout: unique for ever, it
	// names the payment (its reference), its job and its idempotency keys.
	PayoutID string
}

// csvHeader is the first line of a payouts file (the same as the
// single-machine example's).
var csvHeader = []string{"recipient_id", "amount", "currency", "payout_id"}

// readRows reads a payouts file: the header, then one payout a line. Every
// problem is reported before anything is loaded; a payout id given twice is
// one, since it would name two payments with one key.
func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = len(csvHeader)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if strings.Join(head, ",") != strings.Join(csvHeader, ",") {
		return nil, fmt.Errorf("%s: the header must be %s", path, strings.Join(csvHeader, ","))
	}
	var (
		rows []row
		errs []error
		seen = make(map[string]int)
	)
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		amount, err := decimal.NewFromString(strings.TrimSpace(rec[1]))
		if err != nil || !amount.IsPositive() {
			errs = append(errs, fmt.Errorf("line %d: the amount %q is not a positive number", line, rec[1]))
		}
		id := strings.TrimSpace(rec[3])
		switch prev, dup := seen[id]; {
		case id == "":
			errs = append(errs, fmt.Errorf("line %d: no payout id", line))
		case dup:
			errs = append(errs, fmt.Errorf("line %d: payout id %q is on line %d too", line, id, prev))
		}
		seen[id] = line
		rows = append(rows, row{RecipientID: strings.TrimSpace(rec[0]), Amount: amount, Currency: strings.TrimSpace(rec[2]), PayoutID: id})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w (nothing was loaded)", path, errors.Join(errs...))
	}
	return rows, nil
}

// writeRows writes rows as a payouts file.
func writeRows(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	for _, r := range rows {
		_ = w.Write([]string{r.RecipientID, r.Amount.StringFixed(2), r.Currency, r.PayoutID})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}
