package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
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

// The columns of a payouts file, and the SDK's name of each one's field.
const (
	colRecipient = iota
	colAmount
	colCurrency
	colPayout
)

var sdkField = map[string]int{"recipient_id": colRecipient, "amount": colAmount, "currency": colCurrency, "reference": colPayout}

// plainAmount is an amount as a file gives it: digits, and decimals after a
// point. No sign, no exponent (1e3), no thousands separator: what a person
// reads in the file is what is paid.
var plainAmount = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// minorUnits are the decimal places of the ISO 4217 currencies that have
// other than two; every other currency has two. An amount with more places
// than its currency cannot be paid as written.
var minorUnits = map[string]int32{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

// places is how many decimal places currency's amounts have.
func places(currency string) int32 {
	if n, ok := minorUnits[currency]; ok {
		return n
	}
	return 2
}

// utf8BOM starts files saved by some spreadsheets as "CSV UTF-8".
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readRows reads a payouts file: the header, then one payout a line. It
// refuses the whole file for anything in any line that the workers would
// have refused later, naming each line and column: a row the SDK would not
// send (its own validation: amount, currency, recipient id, payout id as the
// reference), an amount written with an exponent or with more decimal
// places than its currency has, a payout id given twice (it would name two
// payments with one key). A UTF-8 byte order mark before the header is
// skipped. Proven by TestLoadRefusesTheWholeFile.
func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1 // a short line is named below, with the others
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if strings.Join(head, ",") != strings.Join(csvHeader, ",") {
		return nil, fmt.Errorf("%s: the header must be %s, not %s", path, strings.Join(csvHeader, ","), strings.Join(head, ","))
	}
	check, err := newSDKCheck()
	if err != nil {
		return nil, err
	}
	defer check.close()
	var (
		rows []row
		errs []error
		seen = make(map[string]int)
	)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (nothing was loaded)", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(csvHeader) {
			errs = append(errs, fmt.Errorf("line %d: %d columns, want %d (%s)", line, len(rec), len(csvHeader), strings.Join(csvHeader, ",")))
			continue
		}
		bad := func(col int, format string, args ...any) {
			errs = append(errs, fmt.Errorf("line %d, column %d (%s): %s", line, col+1, csvHeader[col], fmt.Sprintf(format, args...)))
		}
		x := row{RecipientID: strings.TrimSpace(rec[colRecipient]), Currency: strings.TrimSpace(rec[colCurrency]), PayoutID: strings.TrimSpace(rec[colPayout])}
		text := strings.TrimSpace(rec[colAmount])
		amountOK := plainAmount.MatchString(text)
		if amountOK {
			x.Amount = decimal.RequireFromString(text)
		} else {
			bad(colAmount, "%q is not an amount written as digits with an optional decimal point (no sign, exponent or separators)", rec[colAmount])
		}
		for _, fe := range check.refusals(x) {
			col, ok := sdkField[fe.Field]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("line %d: %s %s", line, fe.Field, fe.Message))
			case col != colAmount || amountOK:
				bad(col, "%q %s", rec[col], fe.Message)
			}
		}
		if n := places(x.Currency); amountOK && x.Amount.Exponent() < -n && !x.Amount.Equal(x.Amount.Truncate(n)) {
			bad(colAmount, "%q has more decimal places than %s has (%d)", rec[colAmount], x.Currency, n)
		}
		if prev, dup := seen[x.PayoutID]; dup && x.PayoutID != "" {
			bad(colPayout, "payout id %q is on line %d too", x.PayoutID, prev)
		}
		seen[x.PayoutID] = line
		rows = append(rows, x)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w (nothing was loaded: correct these lines and load the file again)", path, errors.Join(errs...))
	}
	return rows, nil
}

// sdkCheck asks the SDK whether it would send a payout's initiate: a
// Client whose every request is stopped before it leaves, so that what it
// refuses is the SDK's own validation (a *payments.ValidationError, nothing
// sent), the rules the workers meet, not a copy of them.
type sdkCheck struct{ client *payments.Client }

// errValid stops a request the SDK was about to send: the params passed.
var errValid = errors.New("valid: not sent")

func newSDKCheck() (sdkCheck, error) {
	stop := func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return nil, errValid
	}
	c, err := payments.NewClient("load-checks-only", payments.WithBaseURL("https://payouts-load.invalid"),
		payments.WithMiddleware(stop), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		return sdkCheck{}, fmt.Errorf("the SDK's checks: %w", err)
	}
	return sdkCheck{client: c}, nil
}

func (s sdkCheck) close() { s.client.Close() }

// refusals are the fields of x the SDK refuses (a field named "" when it
// refused the call for another cause).
func (s sdkCheck) refusals(x row) []payments.FieldError {
	_, err := s.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: x.Amount}, Currency: x.Currency, RecipientID: x.RecipientID, Reference: x.PayoutID,
	})
	var ve *payments.ValidationError
	switch {
	case errors.As(err, &ve):
		return ve.Fields
	case err != nil && !errors.Is(err, errValid):
		return []payments.FieldError{{Field: "the SDK", Message: "refuses it: " + err.Error()}}
	}
	return nil
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
