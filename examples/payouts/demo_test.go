package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// -demo-csv N saves N recipients on the service and writes a payouts file
// to them, never over an existing file; paying it shows every final state:
// failed and rejected at confirm, completed after it was pending, and
// refused for a recipient that failed verification.
func TestDemoCSV(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: 10 * time.Millisecond}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.csv")
	ctx := context.Background()

	t.Setenv("PAYMENTS_API_KEY", "")
	var out bytes.Buffer
	_, err := run(ctx, []string{"-demo-csv", "30", "-csv", path}, &out)
	assert.ErrorContains(t, err, "set PAYMENTS_API_KEY and PAYMENTS_BASE_URL")
	assert.NoFileExists(t, path)

	t.Setenv("PAYMENTS_API_KEY", srv.APIKey())
	t.Setenv("PAYMENTS_BASE_URL", srv.URL())
	status, err := run(ctx, []string{"-demo-csv", "30", "-csv", path, "-rate", "1000"}, &out)
	require.NoError(t, err)
	assert.Equal(t, exitCompleted, status)
	assert.Contains(t, out.String(), "Wrote 30 demo payouts to "+path+", to 30 recipients saved on the service; pay them with -csv "+path+"\n")
	rows, err := readRows(path)
	require.NoError(t, err)
	require.Len(t, rows, 30)
	assert.Equal(t, 30, recipientsCreated(srv))
	for i, r := range rows {
		rcpt, ok := srv.Recipient(r.RecipientID)
		require.True(t, ok, "row %d's recipient is saved", i)
		want := map[int]string{7: paymentstest.AmountFails, 13: paymentstest.AmountRejected, 19: paymentstest.AmountCompletesLate}[i]
		assert.Equal(t, want != "", r.Amount.String() == want, "row %d: %s", i, r.Amount)
		assert.Equal(t, i == 22, rcpt.AccountNumber == paymentstest.AccountNumberFailsVerification, "row %d", i)
	}

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = run(ctx, []string{"-demo-csv", "5", "-csv", path}, &out)
	assert.ErrorContains(t, err, "exists: -demo-csv writes a new file only")
	after, _ := os.ReadFile(path)
	assert.Equal(t, before, after)
	assert.Equal(t, 30, recipientsCreated(srv), "nothing saved")

	out.Reset()
	journalPath := filepath.Join(dir, "demo.journal")
	status, err = run(ctx, []string{"-csv", path, "-journal", journalPath, "-report", filepath.Join(dir, "r.csv"), "-rate", "1000"}, &out)
	require.NoError(t, err)
	assert.Equal(t, exitNotCompleted, status)
	assert.Contains(t, out.String(), "payouts: 30 rows: 27 completed, 1 failed, 1 rejected, 1 refused, 0 pending, 0 unknown\n")
	assert.Contains(t, out.String(), "  payout-00023 ")
	assert.Contains(t, out.String(), " refused: recipient_verification_failed: nothing paid; fix the cause and run again (new keys)\n")
	late := readState(t, journalPath)["payout-00020"]
	assert.Equal(t, "pending", late.Status, "confirm answered pending")
	assert.Equal(t, stateCompleted, late.State, "then payment.completed came")
}

// recipientsCreated counts the recipients saved on srv: its
// recipient.created events.
func recipientsCreated(srv *paymentstest.Server) int {
	n := 0
	for _, ev := range srv.Events() {
		if ev.Type == "recipient.created" {
			n++
		}
	}
	return n
}
