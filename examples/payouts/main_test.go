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
// the in-process fake.
func TestPayoutsOnTheFake(t *testing.T) {
	t.Setenv("PAYMENTS_API_KEY", "")
	var out bytes.Buffer
	unknown, err := run(context.Background(), []string{"-rows", "50", "-rate", "1000"}, &out)
	require.NoError(t, err)
	assert.Zero(t, unknown)
	assert.Contains(t, out.String(), "payouts: 50 rows: 50 done, 0 failed, 0 unknown, 0 refused (")
}

var summaryLine = regexp.MustCompile(`payouts: (\d+) rows: (\d+) done, (\d+) failed, (\d+) unknown`)

// TestPayoutsSurviveKills pays 1,000 rows on a fake service that faults 10%
// of requests, killing the program (SIGKILL) three times at random points
// and starting it again until no outcome is unknown. Every row must be paid
// exactly once, as the fake's ledger says, the last summary must match the
// ledger, and a run started again must send requests only for the rows the
// journal did not hold as finished.
func TestPayoutsSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program several times; skipped with -short")
	}
	const n = 1000
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	srv := paymentstest.NewServer(paymentstest.WithLogLimit(100_000))
	defer srv.Close()
	dir := t.TempDir()
	csvPath, journalPath := filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	rows := makeRows(t, srv, n, csvPath)
	require.NoError(t, srv.SetRandomFaults(paymentstest.RandomFaults{
		Rate: 0.10,
		Faults: []paymentstest.Fault{
			{Kind: paymentstest.FaultStatus, Status: http.StatusServiceUnavailable},
			{Kind: paymentstest.FaultStatus, Status: http.StatusInternalServerError},
			{Kind: paymentstest.FaultStatus, Status: http.StatusTooManyRequests},
			{Kind: paymentstest.FaultDrop},
			{Kind: paymentstest.FaultDropAfterWork},
			{Kind: paymentstest.FaultLatency, Latency: 20 * time.Millisecond},
		},
		Seed: seed,
	}))
	keyOwner := ownerOfKeys(rows, 3)

	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-csv", csvPath, "-journal", journalPath, "-concurrency", "16", "-rate", "2000")
		cmd.Env = append(os.Environ(), "PAYOUTS_CHILD=1", "PAYMENTS_API_KEY="+srv.APIKey(), "PAYMENTS_BASE_URL="+srv.URL())
		return cmd
	}
	// checkOnlyUnfinished asserts that the requests since from carried only
	// keys of rows the journal held unfinished before the run.
	checkOnlyUnfinished := func(before map[string]record, from int) {
		t.Helper()
		for _, req := range srv.Requests()[from:] {
			if id, ok := keyOwner[req.IdempotencyKey]; ok && before[id].final() {
				t.Errorf("payout %s was finished in the journal, and was sent again", id)
			}
		}
	}

	for kill := range 3 {
		before, from := readState(t, journalPath), len(srv.Requests())
		target := countLines(journalPath) + 50 + rng.IntN(500) // journal lines to wait for
		cmd := child()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(60 * time.Second)
		for countLines(journalPath) < target && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		t.Logf("kill %d at %d journal lines", kill+1, countLines(journalPath))
		checkOnlyUnfinished(before, from)
	}

	var last []string
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 10, "outcomes still unknown after 10 runs")
		before, from := readState(t, journalPath), len(srv.Requests())
		out, err := child().CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		checkOnlyUnfinished(before, from)
		last = summaryLine.FindStringSubmatch(string(out))
		require.NotNil(t, last, "no summary in %s", out)
		if last[4] == "0" {
			break
		}
	}

	// The ledger: every row paid exactly once, with its amount, and nothing else.
	srv.ClearFaults()
	assert.Len(t, srv.Payments(), n, "one payment per row, no more")
	completed := 0
	for _, r := range rows {
		ps := srv.PaymentsByReference(r.PayoutID)
		if assert.Len(t, ps, 1, r.PayoutID) {
			assert.True(t, r.Amount.Equal(ps[0].Amount), r.PayoutID)
			if ps[0].Status == payments.PaymentStatusCompleted {
				completed++
			}
		}
	}
	assert.Equal(t, []string{strconv.Itoa(n), strconv.Itoa(completed), "0", "0"}, last[1:], "the summary matches the ledger")
	assert.Equal(t, n, completed)
	state := readState(t, journalPath)
	for _, r := range rows {
		assert.Equal(t, eventDone, state[r.PayoutID].Event, r.PayoutID)
	}
	t.Logf("faults injected: %d of %d requests", srv.FaultsInjected(), len(srv.Requests()))
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

// TestPayoutsRestartedAfterTheQuotesExpired kills the program while its
// confirms fail (so rows are journaled initiated, or unknown at confirm),
// moves the fake's clock past the quotes' five minutes, and runs it again
// until nothing is unknown: each stuck row's confirm is refused
// quote_expired, and the row is initiated and confirmed again under the
// next key generation, recorded in the journal (a row whose initiate the
// kill cut off before it was journaled too: its replayed quote has expired
// as well). Every row is paid exactly
// once: one completed payment each, the expired quotes never confirmed, and
// the balance drawn once per row. Before key generations such rows were
// journaled failed for good, and never paid.
func TestPayoutsRestartedAfterTheQuotesExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program several times; skipped with -short")
	}
	const n = 60
	srv := paymentstest.NewServer(paymentstest.WithLogLimit(100_000))
	defer srv.Close()
	dir := t.TempDir()
	csvPath, journalPath := filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	rows := makeRows(t, srv, n, csvPath)
	start := srv.Balance("NGN")
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-csv", csvPath, "-journal", journalPath, "-concurrency", "8", "-rate", "2000")
		cmd.Env = append(os.Environ(), "PAYOUTS_CHILD=1", "PAYMENTS_API_KEY="+srv.APIKey(), "PAYMENTS_BASE_URL="+srv.URL())
		return cmd
	}

	// Every confirm fails: the rows pile up as initiated, or unknown at
	// confirm; the program is killed among them.
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Kind: paymentstest.FaultStatus, Status: http.StatusServiceUnavailable,
		Path: "/payments/confirm", Times: 1_000_000}))
	cmd := child()
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for countLines(journalPath) < 12 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	stuck := 0
	for _, rec := range readState(t, journalPath) {
		require.Contains(t, []string{eventInitiated, eventUnknown}, rec.Event)
		require.NotEmpty(t, rec.QuoteID, "%s: the quote was made", rec.PayoutID)
		stuck++
	}
	require.Positive(t, stuck, "rows were left with a quote")
	// Every quote made so far expires unconfirmed: those journaled, and
	// those whose initiate the kill cut off before the journal had it
	// (the next run's initiate replays them).
	quoted := len(srv.Payments())
	require.GreaterOrEqual(t, quoted, stuck)
	srv.ClearFaults()
	srv.Advance(payments.QuoteLifetime + time.Minute)

	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 5, "outcomes still unknown after 5 runs")
		out, err := child().CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		last := summaryLine.FindStringSubmatch(string(out))
		require.NotNil(t, last, "no summary in %s", out)
		if last[4] == "0" {
			assert.Equal(t, []string{strconv.Itoa(n), strconv.Itoa(n), "0", "0"}, last[1:], "%s", out)
			break
		}
	}

	state := readState(t, journalPath)
	total := decimal.Zero
	for _, r := range rows {
		rec := state[r.PayoutID]
		assert.Equal(t, eventDone, rec.Event, r.PayoutID)
		completed := completedPayments(srv, r.PayoutID)
		if assert.Len(t, completed, 1, "%s is paid exactly once", r.PayoutID) {
			assert.Equal(t, rec.PaymentID, completed[0].ID)
			total = total.Add(completed[0].Quote.TotalAmount)
		}
	}
	assert.True(t, start.Sub(total).Equal(srv.Balance("NGN")), "the balance was drawn once per row")

	// The stuck rows went to generation 1 through a journaled refusal;
	// the others stayed at generation 0.
	moved := 0
	for _, rec := range journalRecords(t, journalPath) {
		if rec.Event == eventRefused {
			assert.Equal(t, string(payments.CodeQuoteExpired), rec.Code)
			assert.Equal(t, 0, rec.Generation)
			assert.Equal(t, 1, state[rec.PayoutID].Generation, rec.PayoutID)
			assert.Equal(t, keyFor(stepConfirm, rec.PayoutID, 1), state[rec.PayoutID].IdempotencyKey)
			moved++
		}
	}
	assert.Equal(t, quoted, moved, "every row with an expired quote, and no other, moved to generation 1")
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
