package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// Only a refusal the service answered (a 4xx) is a final failure: a 5xx,
// even one never retried (501, a proxy's 524), or a redirect says nothing
// of whether the payment was made, so the row stays unknown for the next
// run to repeat with its keys. Marking it failed could have it paid again
// by other means.
func TestFailedKeepsUnansweredOutcomesUnknown(t *testing.T) {
	j, _, err := openJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	require.NoError(t, err)
	defer j.close()
	p := &payer{journal: j}
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusUnprocessableEntity, eventFailed},
		{http.StatusNotFound, eventFailed},
		{http.StatusServiceUnavailable, eventUnknown},
		{http.StatusNotImplemented, eventUnknown},
		{524, eventUnknown},
		{http.StatusFound, eventUnknown},
		{http.StatusTooManyRequests, eventUnknown},
	} {
		rec, err := p.failed(context.Background(), record{PayoutID: "po-1", Step: "confirm"}, &payments.APIError{StatusCode: tc.status})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Event, "HTTP %d", tc.status)
	}
}

// A refusal with a curable cause is journaled refused, with its code, and
// the next run tries the row under the next key generation: the same keys
// would replay the refusal for ever. Only a 4xx is such a refusal: a 5xx
// stays unknown, repeated with its keys.
func TestFailedMarksCurableRefusals(t *testing.T) {
	j, _, err := openJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	require.NoError(t, err)
	defer j.close()
	p := &payer{journal: j}
	for _, tc := range []struct {
		status int
		code   payments.ErrorCode
		want   string
	}{
		{http.StatusUnprocessableEntity, payments.CodeInsufficientBalance, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeRecipientNotVerified, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeRecipientVerificationFailed, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeQuoteExpired, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeDuplicateReference, eventFailed},
		{http.StatusUnprocessableEntity, payments.CodeQuoteAlreadyConfirmed, eventFailed},
		{http.StatusUnprocessableEntity, payments.CodeValidationFailed, eventFailed},
		{http.StatusServiceUnavailable, payments.CodeInsufficientBalance, eventUnknown},
		{http.StatusInternalServerError, payments.CodeQuoteExpired, eventUnknown},
	} {
		rec, err := p.failed(context.Background(), record{PayoutID: "po-1", Step: stepConfirm, Generation: 2},
			&payments.APIError{StatusCode: tc.status, Code: tc.code})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Event, "HTTP %d %s", tc.status, tc.code)
	}
}

// A row refused for its balance is paid under the same payout id once the
// account is funded: each run after a refusal uses the next generation's
// keys (the same keys would replay the refusal), confirming the same quote
// while it lives, and a new one once it expired. Exactly one payment
// completes per row, and the balance is drawn once.
func TestPayoutsRefusedForBalancePaidAfterFunding(t *testing.T) {
	for _, expire := range []bool{false, true} {
		t.Run(map[bool]string{false: "same quote", true: "quote expired"}[expire], func(t *testing.T) {
			srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.Zero))
			defer srv.Close()
			dir := t.TempDir()
			rows := makeRows(t, srv, 6, filepath.Join(dir, "payouts.csv"))
			journalPath := filepath.Join(dir, "payouts.journal")
			c := srv.Client()
			runOnce := func() string {
				t.Helper()
				j, state, err := openJournal(journalPath)
				require.NoError(t, err)
				defer j.close()
				var out bytes.Buffer
				_, err = payAll(context.Background(), &payer{client: c, journal: j}, rows, state, 3, &out)
				require.NoError(t, err)
				return out.String()
			}
			confirmKeys := func(from int) (keys []string) {
				for _, r := range srv.Requests()[from:] {
					if r.Path == "/payments/confirm" {
						keys = append(keys, r.IdempotencyKey)
					}
				}
				return keys
			}

			out := runOnce()
			assert.Contains(t, out, "paying: 6 rows: 0 confirmed, 6 refused, 0 unknown (")
			for _, r := range rows {
				rec := readState(t, journalPath)[r.PayoutID]
				assert.Equal(t, eventRefused, rec.Event)
				assert.Equal(t, string(payments.CodeInsufficientBalance), rec.Code)
				assert.Equal(t, 0, rec.Generation)
			}

			// Not funded yet: the next run is refused again, fresh, under
			// generation 1: a replay of generation 0 would prove nothing.
			from := len(srv.Requests())
			runOnce()
			var want []string
			for _, r := range rows {
				rec := readState(t, journalPath)[r.PayoutID]
				assert.Equal(t, eventRefused, rec.Event)
				assert.Equal(t, 1, rec.Generation)
				want = append(want, keyFor(stepConfirm, r.PayoutID, 1))
			}
			assert.ElementsMatch(t, want, confirmKeys(from))
			for _, r := range srv.Requests()[from:] {
				assert.NotEqual(t, "/payments/initiate", r.Path, "the quotes live: only confirms")
			}

			if expire {
				srv.Advance(payments.QuoteLifetime + time.Minute)
			}
			va, err := c.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
				AccountType: payments.AccountTypeIndividual, AccountName: "Acme", Email: "ops@example.com",
				FirstName: "Ada", LastName: "Okafor", BVN: "12345678901",
			})
			require.NoError(t, err)
			_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("100000"), "NGN")
			require.NoError(t, err)
			funded := srv.Balance("NGN")

			out = runOnce()
			assert.Contains(t, out, "paying: 6 rows: 6 confirmed, 0 refused, 0 unknown (")
			state := readState(t, journalPath)
			total := decimal.Zero
			for _, r := range rows {
				rec := state[r.PayoutID]
				assert.Equal(t, eventDone, rec.Event)
				completed := completedPayments(srv, r.PayoutID)
				require.Len(t, completed, 1, r.PayoutID)
				total = total.Add(completed[0].Quote.TotalAmount)
				if expire {
					// generation 2's confirm met the expired quote: a
					// new quote, under generation 3.
					assert.Equal(t, 3, rec.Generation)
					assert.Len(t, srv.PaymentsByReference(r.PayoutID), 2, "the expired quote's payment, never confirmed, and the new one")
				} else {
					assert.Equal(t, 2, rec.Generation)
					assert.Len(t, srv.PaymentsByReference(r.PayoutID), 1, "the same quote was confirmed")
				}
			}
			assert.True(t, funded.Sub(total).Equal(srv.Balance("NGN")), "drawn once per row")

			// Done rows are never sent again.
			from = len(srv.Requests())
			runOnce()
			assert.Len(t, srv.Requests(), from)
		})
	}
}

// An unknown outcome is repeated with the keys it was tried with, whatever
// its generation: a new generation starts only after a known refusal.
func TestPayRepeatsAnUnknownOutcomeWithItsKeys(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	rows := makeRows(t, srv, 1, filepath.Join(dir, "payouts.csv"))
	j, _, err := openJournal(filepath.Join(dir, "payouts.journal"))
	require.NoError(t, err)
	defer j.close()
	from := len(srv.Requests())
	id := rows[0].PayoutID
	rec, err := (&payer{client: srv.Client(), journal: j}).pay(context.Background(), rows[0],
		record{PayoutID: id, Event: eventUnknown, Step: stepInitiate, Generation: 1, Code: string(payments.CodeInsufficientBalance)})
	require.NoError(t, err)
	assert.Equal(t, eventDone, rec.Event)
	var keys []string
	for _, r := range srv.Requests()[from:] {
		keys = append(keys, r.Path+" "+r.IdempotencyKey)
	}
	assert.Equal(t, []string{"/payments/initiate " + keyFor(stepInitiate, id, 1), "/payments/confirm " + keyFor(stepConfirm, id, 1)}, keys)
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
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: 100_000}))
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
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable,
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
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == exitRunAgain) {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		last := summaryLine.FindStringSubmatch(string(out))
		require.NotNil(t, last, "no summary in %s", out)
		if err == nil {
			assert.Equal(t, []string{strconv.Itoa(n), strconv.Itoa(n), "0", "0", "0", "0", "0"}, last[1:], "%s", out)
			break
		}
	}

	state := readState(t, journalPath)
	total := decimal.Zero
	for _, r := range rows {
		rec := state[r.PayoutID]
		assert.Equal(t, eventOutcome, rec.Event, r.PayoutID)
		assert.Equal(t, stateCompleted, rec.State, r.PayoutID)
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
