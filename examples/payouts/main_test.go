package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestMain lets the test binary run the program itself, as a child process
// the test can kill: with PAYOUTS_CHILD=1 it is the program.
func TestMain(m *testing.M) {
	if os.Getenv("PAYOUTS_CHILD") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPayoutsOnTheFake runs the README's command: a generated file paid on
// the in-process fake, a few of whose rows fail on purpose (demoRows).
func TestPayoutsOnTheFake(t *testing.T) {
	t.Setenv("PAYMENTS_API_KEY", "")
	var out bytes.Buffer
	report := filepath.Join(t.TempDir(), "report.csv")
	status, err := run(context.Background(), []string{"-rows", "50", "-rate", "1000", "-report", report}, &out)
	require.NoError(t, err)
	assert.Equal(t, exitNotCompleted, status)
	assert.Contains(t, out.String(), "paying: 50 rows: 48 confirmed, 2 refused, 0 unknown (")
	assert.Contains(t, out.String(), "payouts: 50 rows: 44 completed, 2 failed, 2 rejected, 2 refused, 0 pending, 0 unknown\n")
	assert.Len(t, reportMaps(t, report), 50)
}

var summaryLine = regexp.MustCompile(`payouts: (\d+) rows: (\d+) completed, (\d+) failed, (\d+) rejected, (\d+) refused, (\d+) pending, (\d+) unknown`)

// The kill test's rows that end otherwise than completed at once, by their
// index modulo 100: paymentstest's test values, and a late payment that the
// test settles as failed, rejected or completed once it is pending.
var killTestOutcomes = map[int]struct {
	amount string
	settle payments.PaymentStatus // "" ends at confirm
	want   payments.PaymentStatus
}{
	7:  {paymentstest.AmountFails, "", payments.PaymentStatusFailed},
	13: {paymentstest.AmountRejected, "", payments.PaymentStatusRejected},
	19: {paymentstest.AmountCompletesLate, payments.PaymentStatusFailed, payments.PaymentStatusFailed},
	23: {paymentstest.AmountCompletesLate, payments.PaymentStatusRejected, payments.PaymentStatusRejected},
	29: {paymentstest.AmountCompletesLate, payments.PaymentStatusCompleted, payments.PaymentStatusCompleted},
}

// TestPayoutsSurviveKills pays 1,000 rows on a fake service that faults 10%
// of requests, killing the program (SIGKILL) three times at random points,
// the last while it awaits outcomes, and starting it again until no outcome
// is unknown or pending. Some rows fail or are rejected at confirm, and
// others after they were pending (settled by the test). Every row must be
// paid exactly once, as the fake's ledger says; each row's final state and
// deciding event, in the journal and in the report, must be the ledger's;
// the report's totals per state must be the ledger's and add up to the
// file's; a run started again must say what the journal supplied and send
// requests only for the rows it did not hold as finished.
func TestPayoutsSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program several times; skipped with -short")
	}
	const n = 1000
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	// The late payments stay pending until the test settles them.
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: 100_000}), paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: time.Hour}))
	defer srv.Close()
	dir := t.TempDir()
	csvPath, journalPath, reportPath := filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal"), filepath.Join(dir, "report.csv")
	rows := makeRowsWith(t, srv, n, csvPath, func(i int) string { return killTestOutcomes[i%100].amount })
	start := srv.Balance("NGN")
	stopSettling := settleWhenPending(t, srv, rows)
	defer stopSettling()
	// A tenth of the requests break, each fault with an equal share: fault
	// i takes its share of what the faults before it left.
	storm := []paymentstest.Fault{
		{Status: http.StatusServiceUnavailable},
		{Status: http.StatusInternalServerError},
		{Status: http.StatusTooManyRequests},
		{Drop: true},
		{Drop: true, AfterWork: true},
		{Latency: 20 * time.Millisecond},
	}
	share := 0.10 / float64(len(storm))
	for i, f := range storm {
		f.Rate, f.Seed = share/(1-float64(i)*share), seed+uint64(i)
		require.NoError(t, srv.InjectFault(f))
	}
	keyOwner := ownerOfKeys(rows, 3)

	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-csv", csvPath, "-journal", journalPath, "-report", reportPath, "-concurrency", "16", "-rate", "2000")
		cmd.Env = append(os.Environ(), "PAYOUTS_CHILD=1", "PAYMENTS_API_KEY="+srv.APIKey(), "PAYMENTS_BASE_URL="+srv.URL())
		return cmd
	}
	// checkOnlyUnfinished asserts that the requests since from carried only
	// keys of rows the journal held unfinished before the run, and that the
	// run said what the journal held.
	checkOnlyUnfinished := func(before map[string]record, from int, out string) {
		t.Helper()
		for _, req := range srv.Requests()[from:] {
			if id, ok := keyOwner[req.IdempotencyKey]; ok && before[id].final() {
				t.Errorf("payout %s was finished in the journal, and was sent again", id)
			}
		}
		if len(before) > 0 {
			assert.Contains(t, out, resumedLine(journalPath, rows, before))
		}
	}

	for kill := range 3 {
		before, from := readState(t, journalPath), len(srv.Requests())
		target := countLines(journalPath) + 50 + rng.IntN(500) // journal lines to wait for
		if kill == 2 {
			target = 1 << 30 // set below: while it awaits outcomes
		}
		cmd := child()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		deadline := time.Now().Add(60 * time.Second)
		outcomes, extra := 0, rng.IntN(300)
	wait:
		for countLines(journalPath) < target && time.Now().Before(deadline) {
			select {
			case <-exited:
				break wait
			case <-time.After(time.Millisecond):
			}
			if kill == 2 && outcomes == 0 {
				if outcomes = countOutcomes(journalPath); outcomes > 0 {
					target = countLines(journalPath) + extra
				}
			}
		}
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		<-exited
		t.Logf("kill %d at %d journal lines (%d outcomes)", kill+1, countLines(journalPath), countOutcomes(journalPath))
		checkOnlyUnfinished(before, from, out.String())
	}

	var last []string
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 10, "outcomes still unknown after 10 runs")
		before, from := readState(t, journalPath), len(srv.Requests())
		out, err := child().CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "some rows fail: exit status 2 or 3: %v\n%s", err, out)
		require.Contains(t, []int{exitNotCompleted, exitRunAgain}, exit.ExitCode(), "%s", out)
		checkOnlyUnfinished(before, from, string(out))
		last = summaryLine.FindStringSubmatch(string(out))
		require.NotNil(t, last, "no summary in %s", out)
		if exit.ExitCode() == exitNotCompleted {
			assert.Equal(t, []string{"0", "0"}, last[6:], "nothing pending or unknown: %s", out)
			checkSummaryTotals(t, string(out), srv, rows)
			break
		}
	}

	// The ledger: every row paid exactly once, with its amount, and nothing else.
	srv.ClearFaults()
	assert.Len(t, srv.Payments(), n, "one payment per row, no more")
	byState := map[payments.PaymentStatus]int{}
	paid := decimal.Zero
	for i, r := range rows {
		ps := srv.PaymentsByReference(r.PayoutID)
		if assert.Len(t, ps, 1, r.PayoutID) {
			assert.True(t, r.Amount.Equal(ps[0].Amount), r.PayoutID)
			want := payments.PaymentStatusCompleted
			if o, ok := killTestOutcomes[i%100]; ok {
				want = o.want
			}
			assert.Equal(t, want, ps[0].Status, r.PayoutID)
			byState[ps[0].Status]++
			if ps[0].Status == payments.PaymentStatusCompleted {
				paid = paid.Add(ps[0].Quote.TotalAmount)
			}
		}
	}
	assert.Equal(t, []string{strconv.Itoa(n), strconv.Itoa(byState[payments.PaymentStatusCompleted]),
		strconv.Itoa(byState[payments.PaymentStatusFailed]), strconv.Itoa(byState[payments.PaymentStatusRejected]), "0", "0", "0"},
		last[1:], "the summary matches the ledger")
	assert.Equal(t, 10*2, byState[payments.PaymentStatusFailed], "failed at confirm, and after pending")
	assert.True(t, start.Sub(paid).Equal(srv.Balance("NGN")), "the balance was drawn once per completed row")
	checkOutcomes(t, srv, rows, readState(t, journalPath), reportMaps(t, reportPath))
	faulted := 0
	for _, rec := range srv.Requests() {
		if rec.Fault != "" {
			faulted++
		}
	}
	t.Logf("faults injected: %d of %d requests", faulted, len(srv.Requests()))
}

// ownerOfKeys maps the keys of the first gens key generations of rows to
// their payout ids.
func ownerOfKeys(rows []row, gens int) map[string]string {
	owner := make(map[string]string, 2*gens*len(rows))
	for _, r := range rows {
		for gen := range gens {
			owner[keyFor(stepInitiate, r.PayoutID, gen)] = r.PayoutID
			owner[keyFor(stepConfirm, r.PayoutID, gen)] = r.PayoutID
		}
	}
	return owner
}

// makeRows saves recipients on srv and writes n payouts to them to path.
func makeRows(t *testing.T, srv *paymentstest.Server, n int, path string) []row {
	return makeRowsWith(t, srv, n, path, nil)
}

// makeRowsWith is makeRows with the amount of row i amount(i) when that is
// not "".
func makeRowsWith(t *testing.T, srv *paymentstest.Server, n int, path string, amount func(i int) string) []row {
	c := srv.Client()
	var ids []string
	for i := range 20 {
		r, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
			AccountNumber: payments.AccountNumber(fmt.Sprintf("00000000%02d", i)), AccountName: "Payee", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		})
		require.NoError(t, err)
		ids = append(ids, r.ID)
	}
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{RecipientID: ids[i%len(ids)], Amount: decimal.New(int64(100+i), -2), Currency: "NGN", PayoutID: fmt.Sprintf("march-%04d", i)}
		if amount != nil && amount(i) != "" {
			rows[i].Amount = decimal.RequireFromString(amount(i))
		}
	}
	require.NoError(t, writeRows(path, rows))
	return rows
}

func readState(t *testing.T, path string) map[string]record {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]record{}
	}
	require.NoError(t, err)
	defer f.Close()
	state, _, err := readJournal(f)
	require.NoError(t, err)
	return state
}

func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// A journal that cannot be written stops the whole run at its first
// failure: no payout is started once an outcome could not be recorded.
func TestPayoutsStopWhenTheJournalFails(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	rows := makeRows(t, srv, 200, filepath.Join(dir, "payouts.csv"))
	j, state, err := openJournal(filepath.Join(dir, "payouts.journal"))
	require.NoError(t, err)
	require.NoError(t, j.f.Close()) // every append now fails
	var out bytes.Buffer
	_, err = payAll(context.Background(), &payer{client: srv.Client(), journal: j}, rows, state, 4, &out)
	require.Error(t, err)
	// Each of the 4 workers had at most one payout in flight when the first
	// append failed; without the stop every row would be paid.
	assert.LessOrEqual(t, len(srv.Payments()), 4, "payouts started after the journal failed")
}

// completedPayments returns the payments of srv with this reference that
// completed: paid.
func completedPayments(srv *paymentstest.Server, reference string) []payments.Payment {
	var completed []payments.Payment
	for _, p := range srv.PaymentsByReference(reference) {
		if p.Status == payments.PaymentStatusCompleted {
			completed = append(completed, p)
		}
	}
	return completed
}

// journalRecords reads every record of the journal at path, in order.
func journalRecords(t *testing.T, path string) []record {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var recs []record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec record
		require.NoError(t, json.Unmarshal(line, &rec))
		recs = append(recs, rec)
	}
	return recs
}
