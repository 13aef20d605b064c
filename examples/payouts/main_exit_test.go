package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// runChild runs the program as a child process against srv and returns
// its output and exit status.
func runChild(t *testing.T, srv *paymentstest.Server, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PAYOUTS_CHILD=1", "PAYMENTS_API_KEY="+srv.APIKey(), "PAYMENTS_BASE_URL="+srv.URL())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("running the program: %v", err)
	return "", 0
}

// The exit status says how the rows ended: 3 while a payment is pending
// (its outcome not known when -wait ended), then, once the fake settled it
// as failed, 2 with the row named and why; 0 when every row completed; 1
// for bad flags. The run started again says what the journal supplied
// (TestPrintResumed checks the counts) and sends no payment request: only
// the event list is asked.
func TestExitStatusAndResumedRun(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: time.Hour})) // settled by the test
	defer srv.Close()
	dir := t.TempDir()
	csvPath, journalPath := filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	rows := makeRowsWith(t, srv, 3, csvPath, func(i int) string {
		if i == 1 {
			return paymentstest.AmountCompletesLate
		}
		return ""
	})
	args := []string{"-csv", csvPath, "-journal", journalPath, "-report", filepath.Join(dir, "report.csv"), "-rate", "1000"}

	// -wait ends while the late payment is pending (the others may be
	// pending too on a slow machine: the counts are not asserted).
	out, status := runChild(t, srv, append(args, "-wait", "1s")...)
	assert.Equal(t, exitRunAgain, status, out)
	assert.NotContains(t, out, "Resumed from the journal", "a first run")
	assert.Regexp(t, `\npayouts: 3 rows: \d completed, 0 failed, 0 rejected, 0 refused, [1-3] pending, 0 unknown\n`, out)
	assert.Contains(t, out, "  "+rows[1].PayoutID+" 4000.05 NGN pending: confirmed; no final outcome yet: run again to learn it\n")
	assert.Regexp(t, `\n[1-3] rows have no final outcome yet: run again to learn them \(the journal keeps their keys\); exit status 3\n`, out)

	late := srv.PaymentsByReference(rows[1].PayoutID)
	require.Len(t, late, 1)
	_, err := srv.SettlePayment(late[0].ID, payments.PaymentStatusFailed)
	require.NoError(t, err)
	before, from := readState(t, journalPath), len(srv.Requests())
	require.Equal(t, eventDone, before[rows[1].PayoutID].Event)
	out, status = runChild(t, srv, args...)
	assert.Equal(t, exitNotCompleted, status, out)
	assert.Contains(t, out, resumedLine(journalPath, rows, before))
	assert.Contains(t, out, "payouts: 3 rows: 2 completed, 1 failed, 0 rejected, 0 refused, 0 pending, 0 unknown\n")
	assert.Regexp(t, `\n  `+rows[1].PayoutID+` 4000.05 NGN failed: payment.failed \(event [0-9a-f-]+, payment `+late[0].ID+`\)\n`, out)
	assert.Contains(t, out, "1 rows did not complete (a refused row can be fixed and run again, under new keys); exit status 2\n")
	for _, req := range srv.Requests()[from:] {
		assert.True(t, strings.HasPrefix(req.Path, "/webhooks/events"), "only the event list is asked: %s %s", req.Method, req.Path)
	}

	// Every row completed: 0.
	ok := paymentstest.NewServer()
	defer ok.Close()
	okCSV := filepath.Join(dir, "ok.csv")
	makeRows(t, ok, 2, okCSV)
	out, status = runChild(t, ok, "-csv", okCSV, "-journal", filepath.Join(dir, "ok.journal"), "-report", filepath.Join(dir, "ok-report.csv"))
	assert.Equal(t, exitCompleted, status, out)
	assert.Contains(t, out, "payouts: 2 rows: 2 completed, 0 failed, 0 rejected, 0 refused, 0 pending, 0 unknown\n")
	assert.NotContains(t, out, "did not complete")

	out, status = runChild(t, ok, "-csv", okCSV, "-concurrency", "0")
	assert.Equal(t, exitStopped, status, out)
	assert.Contains(t, out, "-concurrency, -rate, -rows and -wait must be positive")
}

// A run whose journal holds nothing of the file says nothing of it; one
// whose journal holds some rows counts them by what the run does with them.
func TestPrintResumed(t *testing.T) {
	rows := []row{{PayoutID: "a"}, {PayoutID: "b"}, {PayoutID: "c"}, {PayoutID: "d"}, {PayoutID: "e"}, {PayoutID: "f"}}
	var out bytes.Buffer
	printResumed(&out, "j", rows, map[string]record{"other": {Event: eventDone}})
	assert.Empty(t, out.String())
	printResumed(&out, "j", rows, map[string]record{
		"a": {Event: eventOutcome}, "b": {Event: eventFailed}, "c": {Event: eventDone},
		"d": {Event: eventRefused}, "e": {Event: eventUnknown},
	})
	assert.Equal(t, "Resumed from the journal j: 5 of 6 rows in it: 2 decided (not sent again), 1 confirmed (their outcome is awaited), "+
		"1 refused (tried again under new keys), 1 to repeat with their keys; 1 not started\n", out.String())
}

// Interrupted while awaiting, the program stops with an error (exit 1) and
// journals nothing it did not learn.
func TestAwaitStopsWhenInterrupted(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: time.Hour}))
	defer srv.Close()
	dir := t.TempDir()
	csvPath, journalPath := filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	makeRowsWith(t, srv, 1, csvPath, func(int) string { return paymentstest.AmountCompletesLate })
	t.Setenv("PAYMENTS_API_KEY", srv.APIKey())
	t.Setenv("PAYMENTS_BASE_URL", srv.URL())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for countLines(journalPath) < 2 && ctx.Err() == nil { // initiated, done
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var out bytes.Buffer
	status, err := run(ctx, []string{"-csv", csvPath, "-journal", journalPath, "-report", filepath.Join(dir, "r.csv")}, &out)
	assert.Equal(t, exitStopped, status)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, eventDone, readState(t, journalPath)["march-0000"].Event)
}
