package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The summary counts the rows by state, gives the totals per currency and
// state and the file's total, names every row that did not complete with
// its reason, and says what the exit status means.
func TestSummaryNamesRowsThatDidNotComplete(t *testing.T) {
	d := decimal.RequireFromString
	rows := []row{
		{RecipientID: "r1", Amount: d("10.00"), Currency: "NGN", PayoutID: "p-1"},
		{RecipientID: "r2", Amount: d("4000.02"), Currency: "NGN", PayoutID: "p-2"},
		{RecipientID: "r3", Amount: d("5.50"), Currency: "NGN", PayoutID: "p-3"},
		{RecipientID: "r4", Amount: d("7.25"), Currency: "USD", PayoutID: "p-4"},
	}
	state := map[string]record{
		"p-1": {PayoutID: "p-1", Event: eventOutcome, State: stateCompleted, PaymentID: "pay-1", EventID: "ev-1", Fee: "0.15", Stan: "s-1"},
		"p-2": {PayoutID: "p-2", Event: eventOutcome, State: stateFailed, PaymentID: "pay-2", EventID: "ev-2", Fee: "60", Stan: "s-2"},
		"p-3": {PayoutID: "p-3", Event: eventRefused, Code: string(payments.CodeInsufficientBalance), Reason: "refused, nothing paid: ..."},
		"p-4": {PayoutID: "p-4", Event: eventOutcome, State: stateCompleted, PaymentID: "pay-4", EventID: "ev-4", Fee: "0.11"},
	}
	rep := buildReport(rows, state)
	var out bytes.Buffer
	printSummary(&out, rep, "r.csv")
	assert.Equal(t, `payouts: 4 rows: 2 completed, 1 failed, 0 rejected, 1 refused, 0 pending, 0 unknown
report: r.csv
  NGN  completed       1 rows  amount          10.00  fee         0.15
  NGN  failed          1 rows  amount        4000.02  fee        60.00
  NGN  refused         1 rows  amount           5.50  fee         0.00
  NGN  all             3 rows  amount        4015.52  fee        60.15
  USD  completed       1 rows  amount           7.25  fee         0.11
  USD  all             1 rows  amount           7.25  fee         0.11
rows that did not complete:
  p-2 4000.02 NGN failed: payment.failed (event ev-2, payment pay-2)
  p-3 5.50 NGN refused: insufficient_balance: nothing paid; fix the cause and run again (new keys)
2 rows did not complete (a refused row can be fixed and run again, under new keys); exit status 2
`, out.String())
	assert.Equal(t, exitNotCompleted, exitStatus(rep))

	// A row still pending makes it exit 3: run again.
	state["p-1"] = record{PayoutID: "p-1", Event: eventDone, PaymentID: "pay-1"}
	rep = buildReport(rows, state)
	out.Reset()
	printSummary(&out, rep, "r.csv")
	assert.Contains(t, out.String(), "  p-1 10.00 NGN pending: confirmed; no final outcome yet: run again to learn it\n")
	assert.Contains(t, out.String(), "1 rows have no final outcome yet: run again to learn them (the journal keeps their keys); exit status 3\n")
	assert.Equal(t, exitRunAgain, exitStatus(rep))

	// Only completed rows: 0, and no list.
	rep = buildReport(rows[:1], map[string]record{"p-1": {Event: eventOutcome, State: stateCompleted}})
	out.Reset()
	printSummary(&out, rep, "r.csv")
	assert.NotContains(t, out.String(), "did not complete")
	assert.Equal(t, exitCompleted, exitStatus(rep))
}

func TestMoney(t *testing.T) {
	for in, want := range map[string]string{"5.5": "5.50", "5.50": "5.50", "10": "10.00", "0.125": "0.125", "1e3": "1000.00", "-0.1": "-0.10"} {
		assert.Equal(t, want, money(decimal.RequireFromString(in)), in)
	}
}

// A journal written before outcomes were awaited holds a payment that
// confirm answered failed as a failed record: the report keeps its state.
func TestReportReadsAnEarlierJournal(t *testing.T) {
	rows := []row{{PayoutID: "p-1", Amount: decimal.New(1, 0), Currency: "NGN"}}
	rep := buildReport(rows, map[string]record{"p-1": {PayoutID: "p-1", Event: eventFailed, Step: stepConfirm,
		Status: "rejected", PaymentID: "pay-1", Reason: "the service rejected the payment"}})
	assert.Equal(t, stateRejected, rep[0].State)
	assert.Equal(t, "the service rejected the payment", rep[0].Why)
	assert.Equal(t, exitNotCompleted, exitStatus(rep))
}

// The summary names the first maxListed rows and points to the report for
// the rest.
func TestSummaryListsAtMostMaxListed(t *testing.T) {
	var rows []row
	state := map[string]record{}
	for i := range maxListed + 5 {
		id := fmt.Sprintf("p-%d", i)
		rows = append(rows, row{PayoutID: id, Amount: decimal.New(1, 0), Currency: "NGN"})
		state[id] = record{Event: eventOutcome, State: stateRejected, EventID: "e", PaymentID: "p"}
	}
	var out bytes.Buffer
	printSummary(&out, buildReport(rows, state), "r.csv")
	assert.Contains(t, out.String(), "  ... and 5 more: see the report\n")
	assert.Contains(t, out.String(), fmt.Sprintf("%d rows did not complete", maxListed+5))
}

// reportMaps reads the report CSV at path with the example's readReport:
// one map of column to value per row.
func reportMaps(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs, err := readReport(path)
	require.NoError(t, err)
	var out []map[string]string
	for _, rec := range recs {
		m := map[string]string{}
		for i, h := range reportHeader {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// decidingEvents maps each payment id of srv's ledger to the id of its
// payment.completed, .failed or .rejected event.
func decidingEvents(t *testing.T, srv *paymentstest.Server) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ev := range srv.Events() {
		switch ev.Type {
		case payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected:
			var data struct{ ID string }
			require.NoError(t, json.Unmarshal(ev.Data, &data))
			require.NotContains(t, out, data.ID, "one final event per payment")
			out[data.ID] = ev.ID
		}
	}
	return out
}

// checkOutcomes asserts that each row's journal record and report row hold
// the ledger's payment: its final state, the event that decided it, its fee
// and a stan the confirm was answered with; and that the report's amounts
// per state are the ledger's and add up to the file's.
func checkOutcomes(t *testing.T, srv *paymentstest.Server, rows []row, state map[string]record, report []map[string]string) {
	t.Helper()
	decider := decidingEvents(t, srv)
	stans := map[string]map[string]bool{} // confirm key -> stans answered 200
	for _, req := range srv.Requests() {
		if req.Path == "/payments/confirm" && req.StatusCode == 200 {
			if stans[req.IdempotencyKey] == nil {
				stans[req.IdempotencyKey] = map[string]bool{}
			}
			stans[req.IdempotencyKey][req.Stan] = true
		}
	}
	require.Len(t, report, len(rows))
	ledger, reported := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	file, sum := decimal.Zero, decimal.Zero
	for i, r := range rows {
		rec, rep := state[r.PayoutID], report[i]
		ps := srv.PaymentsByReference(r.PayoutID)
		require.Len(t, ps, 1, r.PayoutID)
		p := ps[0]
		assert.Equal(t, eventOutcome, rec.Event, r.PayoutID)
		assert.Equal(t, string(p.Status), rec.State, r.PayoutID)
		assert.Equal(t, decider[p.ID], rec.EventID, "%s: the deciding event", r.PayoutID)
		assert.Equal(t, map[string]string{
			"payout_id": r.PayoutID, "recipient_id": r.RecipientID, "amount": money(r.Amount), "currency": "NGN",
			"fee": money(p.Quote.Fee), "state": string(p.Status), "payment_id": p.ID, "stan": rep["stan"],
			"event_id": decider[p.ID], "reason": rep["reason"],
		}, rep)
		assert.True(t, stans[rec.IdempotencyKey][rep["stan"]], "%s: the stan %q answered its confirm", r.PayoutID, rep["stan"])
		ledger[string(p.Status)] = ledger[string(p.Status)].Add(p.Amount)
		amount, err := decimal.NewFromString(rep["amount"])
		require.NoError(t, err)
		reported[rep["state"]] = reported[rep["state"]].Add(amount)
		file, sum = file.Add(r.Amount), sum.Add(amount)
	}
	assert.Equal(t, fmt.Sprint(ledger), fmt.Sprint(reported), "the report's totals per state are the ledger's")
	assert.True(t, file.Equal(sum), "the report adds up to the file: %s, %s", file, sum)
}

var totalLine = regexp.MustCompile(`(?m)^  NGN  (\w+) +(\d+) rows  amount +([0-9.]+)  fee +([0-9.]+)$`)

// checkSummaryTotals asserts that the summary's lines of totals are the
// ledger's, per state, and the file's in all.
func checkSummaryTotals(t *testing.T, out string, srv *paymentstest.Server, rows []row) {
	t.Helper()
	type sums struct {
		n           int
		amount, fee decimal.Decimal
	}
	want := map[string]*sums{"all": {}}
	for _, r := range rows {
		p := srv.PaymentsByReference(r.PayoutID)[0]
		if want[string(p.Status)] == nil {
			want[string(p.Status)] = &sums{}
		}
		for _, s := range []*sums{want[string(p.Status)], want["all"]} {
			s.n++
			s.amount, s.fee = s.amount.Add(p.Amount), s.fee.Add(p.Quote.Fee)
		}
	}
	got := map[string]string{}
	for _, m := range totalLine.FindAllStringSubmatch(out, -1) {
		got[m[1]] = m[2] + " " + m[3] + " " + m[4]
	}
	wantText := map[string]string{}
	for s, v := range want {
		wantText[s] = fmt.Sprintf("%d %s %s", v.n, v.amount.StringFixed(2), v.fee.StringFixed(2))
	}
	assert.Equal(t, wantText, got, "the summary's totals:\n%s", out)
}

// settleWhenPending settles each late payment of rows (killTestOutcomes)
// as its row says once it is pending after its confirm, until the returned
// function is called.
func settleWhenPending(t *testing.T, srv *paymentstest.Server, rows []row) func() {
	index := map[string]int{}
	for i, r := range rows {
		index[r.PayoutID] = i
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, p := range srv.Payments() {
				i, ok := index[p.Reference]
				if o := killTestOutcomes[i%100]; ok && o.settle != "" && p.Status == payments.PaymentStatusPending {
					if _, err := srv.SettlePayment(p.ID, o.settle); err != nil && !strings.Contains(err.Error(), "not pending after a confirm") {
						t.Errorf("settling %s: %v", p.Reference, err)
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
}

// countOutcomes counts the outcome records of the journal at path.
func countOutcomes(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte(`"event":"outcome"`))
}

// resumedLine is what a run says of the journal's state before.
func resumedLine(path string, rows []row, before map[string]record) string {
	n := map[string]int{}
	known := 0
	for _, r := range rows {
		if ev := before[r.PayoutID].Event; ev != "" {
			n[ev]++
			known++
		}
	}
	return fmt.Sprintf("Resumed from the journal %s: %d of %d rows in it: %d decided (not sent again), %d confirmed (their outcome is awaited), "+
		"%d refused (tried again under new keys), %d to repeat with their keys; %d not started\n",
		path, known, len(rows), n[eventOutcome]+n[eventFailed], n[eventDone], n[eventRefused], n[eventInitiated]+n[eventUnknown], len(rows)-known)
}
