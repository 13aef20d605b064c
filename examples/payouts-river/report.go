package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// The states of a row in the report: the single-machine example's.
const (
	stateCompleted = "completed" // payment.completed: paid
	stateFailed    = "failed"    // payment.failed: nothing paid
	stateRejected  = "rejected"  // payment.rejected: nothing paid
	stateRefused   = "refused"   // the service refused the call: nothing paid
	statePending   = "pending"   // confirmed; no final outcome yet
	stateUnknown   = "unknown"   // not paid yet, or the outcome of a call is not known yet
)

var reportStates = []string{stateCompleted, stateFailed, stateRejected, stateRefused, statePending, stateUnknown}

// reportRow is one row of the report.
type reportRow struct {
	row
	Fee                      decimal.Decimal
	State                    string
	PaymentID, Stan, EventID string
	// Cause is the whole reason (the report's); Why its short form (the
	// summary's).
	Cause, Why string
}

// reportHeader is the first line of the report CSV (the single-machine
// example's).
var reportHeader = []string{"payout_id", "recipient_id", "amount", "currency", "fee", "state", "payment_id", "stan", "event_id", "reason"}

// exitStatus is status's exit status for the report.
func exitStatus(rep []reportRow) int {
	status := exitCompleted
	for _, r := range rep {
		switch r.State {
		case statePending, stateUnknown:
			return exitRunAgain
		case stateCompleted:
		default:
			status = exitNotCompleted
		}
	}
	return status
}

// writeReport writes the report CSV to path, through a temporary file
// renamed into place.
func writeReport(path string, rep []reportRow) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(reportHeader)
	for _, r := range rep {
		// Every cell neutralised: a payout id or a reason a spreadsheet
		// would run as a formula (=HYPERLINK(...)) is shown as text.
		_ = w.Write(cellRow([]string{r.PayoutID, r.RecipientID, money(r.Amount), r.Currency, money(r.Fee), r.State,
			r.PaymentID, r.Stan, r.EventID, r.Cause}))
	}
	w.Flush()
	err = errors.Join(w.Error(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// readReport reads a report that writeReport wrote: its rows of cells,
// each as it was before writeReport neutralised it for spreadsheets
// (cells.go), for a program that takes the report further (reconciling it,
// loading its refused rows under new ids). The header is checked, not
// returned.
func readReport(path string) ([][]string, error) {
	rows, err := readCSV(path, reportHeader)
	if err != nil {
		return nil, fmt.Errorf("report %w", err)
	}
	return rows, nil
}

// money prints an amount with at least two decimals and every decimal it
// has.
func money(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}

// total is the count and sums of a currency's rows in one state.
type total struct {
	rows        int
	amount, fee decimal.Decimal
}

// maxListed is how many rows that did not complete the summary names.
const maxListed = 20

// printSummary prints the counts by state, the totals by currency and
// state (and each currency's total, the file's), and names the rows that
// did not complete with the reason, then what the exit status says.
func printSummary(out io.Writer, rep []reportRow, reportPath string) {
	byState := make(map[string]int)
	totals := make(map[string]map[string]*total) // currency -> state
	for _, r := range rep {
		byState[r.State]++
		if totals[r.Currency] == nil {
			totals[r.Currency] = make(map[string]*total)
		}
		for _, s := range []string{r.State, "all"} {
			t := totals[r.Currency][s]
			if t == nil {
				t = &total{}
				totals[r.Currency][s] = t
			}
			t.rows++
			t.amount, t.fee = t.amount.Add(r.Amount), t.fee.Add(r.Fee)
		}
	}
	counts := make([]string, len(reportStates))
	for i, s := range reportStates {
		counts[i] = fmt.Sprintf("%d %s", byState[s], s)
	}
	fmt.Fprintf(out, "payouts: %d rows: %s\n", len(rep), strings.Join(counts, ", "))
	fmt.Fprintf(out, "report: %s\n", reportPath)
	currencies := make([]string, 0, len(totals))
	for c := range totals {
		currencies = append(currencies, c)
	}
	sort.Strings(currencies)
	for _, c := range currencies {
		for _, s := range append(reportStates, "all") {
			if t := totals[c][s]; t != nil {
				fmt.Fprintf(out, "  %-4s %-10s %6d rows  amount %14s  fee %12s\n", c, s, t.rows, t.amount.StringFixed(2), t.fee.StringFixed(2))
			}
		}
	}
	listed := 0
	for _, r := range rep {
		if r.State == stateCompleted {
			continue
		}
		if listed == 0 {
			fmt.Fprintln(out, "rows that did not complete:")
		}
		if listed++; listed <= maxListed {
			fmt.Fprintf(out, "  %s %s %s %s: %s\n", r.PayoutID, money(r.Amount), r.Currency, r.State, r.Why)
		}
	}
	if listed > maxListed {
		fmt.Fprintf(out, "  ... and %d more: see the report\n", listed-maxListed)
	}
	switch exitStatus(rep) {
	case exitRunAgain:
		fmt.Fprintf(out, "%d rows are not decided yet: the workers are at them (status again, or -watch); exit status %d\n",
			byState[statePending]+byState[stateUnknown], exitRunAgain)
	case exitNotCompleted:
		fmt.Fprintf(out, "%d rows did not complete (load a refused row under a new payout id once its cause is fixed); exit status %d\n",
			listed, exitNotCompleted)
	}
}
