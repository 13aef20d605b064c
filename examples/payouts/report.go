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

// The states of a row in the report.
const (
	stateCompleted = "completed" // payment.completed: paid
	stateFailed    = "failed"    // payment.failed: nothing paid
	stateRejected  = "rejected"  // payment.rejected: nothing paid
	stateRefused   = "refused"   // the service refused the call: nothing paid
	statePending   = "pending"   // confirmed; no final outcome yet
	stateUnknown   = "unknown"   // the outcome of a call is not known yet
)

var reportStates = []string{stateCompleted, stateFailed, stateRejected, stateRefused, statePending, stateUnknown}

// Exit statuses of the program (see the package documentation).
const (
	exitCompleted    = 0 // every row completed
	exitStopped      = 1 // the program stopped: bad flags or file, the journal failed, interrupted
	exitNotCompleted = 2 // every row is decided, and some did not complete
	exitRunAgain     = 3 // some outcomes are not known yet: run again to learn them
)

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

// reportHeader is the first line of the report CSV.
var reportHeader = []string{"payout_id", "recipient_id", "amount", "currency", "fee", "state", "payment_id", "stan", "event_id", "reason"}

// buildReport gives each row its state from its last journal record.
func buildReport(rows []row, state map[string]record) []reportRow {
	out := make([]reportRow, len(rows))
	for i, r := range rows {
		rec := state[r.PayoutID]
		rr := reportRow{row: r, PaymentID: rec.PaymentID, Stan: rec.Stan, EventID: rec.EventID}
		rr.Fee, _ = decimal.NewFromString(rec.Fee) // "" (no quote) is zero
		switch rec.Event {
		case eventOutcome:
			rr.State, rr.Cause = rec.State, rec.Reason
			if rr.State != stateCompleted && rr.Cause == "" {
				rr.Cause = "the service sent payment." + rec.State
			}
		case eventDone:
			rr.State, rr.Cause = statePending, "confirmed; no final outcome yet: run again to learn it"
		case eventFailed, eventRefused:
			rr.State, rr.Cause = stateRefused, rec.Reason
			if rec.Step == stepConfirm && (rec.Status == stateFailed || rec.Status == stateRejected) {
				// A journal of an earlier version: confirm answered the
				// final state, journaled failed, with no event.
				rr.State = rec.Status
			}
		case "":
			rr.State, rr.Cause = stateUnknown, "not paid yet: run again"
		default: // initiated, unknown
			rr.State, rr.Cause = stateUnknown, rec.Reason
			if rr.Cause == "" {
				rr.Cause = "quoted, not confirmed yet: run again"
			}
		}
		rr.Why = rr.Cause
		switch {
		case rec.Event == eventOutcome && rr.State != stateCompleted:
			rr.Why = fmt.Sprintf("payment.%s (event %s, payment %s)", rec.State, rec.EventID, rec.PaymentID)
		case rec.Event == eventRefused && rec.Code != "":
			rr.Why = rec.Code + ": nothing paid; fix the cause and run again (new keys)"
		case rec.Event == eventFailed && rec.Code != "":
			rr.Why = rec.Code + ": refused for good; see the report"
		}
		out[i] = rr
	}
	return out
}

// exitStatus is the program's exit status for the report.
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
// renamed into place, so that a run killed while writing leaves the last
// complete report.
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
// has, so that "5.50" stays "5.50" and "0.125" is not rounded.
func money(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}

// total is the count and sums of a currency's rows in one state.
type total struct {
	rows        int
	amount, fee decimal.Decimal
}

// maxListed is how many rows that did not complete the summary names; the
// report has them all.
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
		fmt.Fprintf(out, "%d rows have no final outcome yet: run again to learn them (the journal keeps their keys); exit status %d\n",
			byState[statePending]+byState[stateUnknown], exitRunAgain)
	case exitNotCompleted:
		fmt.Fprintf(out, "%d rows did not complete (a refused row can be fixed and run again, under new keys); exit status %d\n",
			listed, exitNotCompleted)
	}
}
