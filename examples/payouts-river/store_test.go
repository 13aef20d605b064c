package main

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// Loading a file inserts a row and a job per payout; loading it again (or
// another file with the same payout ids) inserts nothing, and a payout id
// loaded with another amount refuses the whole file. Nothing is sent to the
// service by load.
func TestLoadTwiceInsertsNothing(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "march.csv")
	rows := makeRows(t, srv, 5, path, "march", nil)
	getenv := env(db, nil)
	before := len(srv.Requests())

	out := loadFile(t, getenv, path, "")
	if !strings.Contains(out, "run march: 5 rows loaded as jobs, 0 already loaded") {
		t.Errorf("first load: %s", out)
	}
	out = loadFile(t, getenv, path, "again")
	if !strings.Contains(out, "run again: 0 rows loaded as jobs, 5 already loaded (not again)") {
		t.Errorf("second load: %s", out)
	}
	if n := jobCount(db); n != 5 {
		t.Errorf("%d jobs, want 5", n)
	}
	if n := dbCount(db, `SELECT count(*) FROM payouts WHERE run = 'march' AND job_id IS NOT NULL`); n != 5 {
		t.Errorf("%d rows of run march with their job, want 5", n)
	}

	// The same payout id with another amount: an error naming it, and
	// nothing of the file loaded (its new row neither).
	rows[2].Amount = decimal.RequireFromString("99.00")
	rows = append(rows, row{RecipientID: rows[0].RecipientID, Amount: decimal.RequireFromString("5.00"), Currency: "NGN", PayoutID: "april-0001"})
	bad := csvFile(t, "changed.csv")
	if err := writeRows(bad, rows); err != nil {
		t.Fatal(err)
	}
	status, out := runIn(t, context.Background(), getenv, false, "load", "-csv", bad)
	if status != exitStopped || !strings.Contains(out, `line 4: payout id "march-0002" was loaded (run "march", line 4)`) ||
		!strings.Contains(out, "nothing was loaded") {
		t.Errorf("a changed amount: %d: %s", status, out)
	}
	if n := dbCount(db, `SELECT count(*) FROM payouts`); n != 5 {
		t.Errorf("%d rows after the refused file, want 5", n)
	}
	if len(srv.Requests()) != before {
		t.Errorf("load sent %d requests to the service", len(srv.Requests())-before)
	}
}
