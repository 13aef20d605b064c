package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// load refuses the whole file for everything the workers would be refused
// later, naming each bad line and column: the SDK's own checks (amount
// range, currency code, recipient id, payout id), an amount with an
// exponent or more decimal places than its currency has, a short line, a
// payout id given twice. Nothing is inserted, not even the good rows. A
// UTF-8 byte order mark before the header is skipped: that file loads.
func TestLoadRefusesTheWholeFile(t *testing.T) {
	const rcp = "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11"
	db := testDB(t)
	getenv := env(db, nil)
	lines := []string{
		"recipient_id,amount,currency,payout_id",
		rcp + ",10.00,NGN,good-1",                  // 2: good
		rcp + ",1234567890123456789012345,NGN,big", // 3: 25 digits
		rcp + ",10.00,,no-currency",                // 4: empty currency
		"not-a-uuid,10.00,NGN,bad-recipient",       // 5
		rcp + ",1e3,NGN,exponent",                  // 6
		rcp + ",10.001,NGN,three-places",           // 7
		rcp + ",0.00,NGN,zero",                     // 8
		rcp + ",-5.00,NGN,negative",                // 9
		rcp + ",10.00,ngn,lower",                   // 10
		rcp + ",10.00,NGN,",                        // 11: no payout id
		rcp + ",10.00,NGN,good-1",                  // 12: twice
		rcp + ",10.00,NGN",                         // 13: short
		rcp + ",100.5,JPY,yen",                     // 14: JPY has none
		rcp + ",10.001,KWD,dinar",                  // 15: good: KWD has three
		rcp + ",10.0000,NGN,trailing-zeros",        // 16: good: the value has two
	}
	path := csvFile(t, "bad.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	status, out := runIn(t, context.Background(), getenv, false, "load", "-csv", path)
	if status != exitStopped {
		t.Errorf("load of a bad file: %d: %s", status, out)
	}
	for _, want := range []string{
		`line 3, column 2 (amount): "1234567890123456789012345" must be less than 10^18`,
		`line 4, column 3 (currency): "" must be a three-letter ISO 4217 code`,
		`line 5, column 1 (recipient_id): "not-a-uuid" must be a UUID`,
		`line 6, column 2 (amount): "1e3" is not an amount written as digits`,
		`line 7, column 2 (amount): "10.001" has more decimal places than NGN has (2)`,
		`line 8, column 2 (amount): "0.00" must be greater than zero`,
		`line 9, column 2 (amount): "-5.00" is not an amount written as digits`,
		`line 10, column 3 (currency): "ngn" must be a three-letter ISO 4217 code`,
		`line 11, column 4 (payout_id): "" is required`,
		`line 12, column 4 (payout_id): payout id "good-1" is on line 2 too`,
		`line 13: 3 columns, want 4`,
		`line 14, column 2 (amount): "100.5" has more decimal places than JPY has (0)`,
		"nothing was loaded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	for _, good := range []string{"line 2,", "line 15", "line 16"} {
		if strings.Contains(out, good) {
			t.Errorf("a good line is named (%s):\n%s", good, out)
		}
	}
	if n := dbCount(db, `SELECT count(*) FROM payouts`); n > 0 {
		t.Errorf("%d rows inserted from a refused file", n)
	}

	// The good lines alone, behind a byte order mark: loaded.
	good := []string{lines[0], lines[1], lines[14], lines[15]}
	bom := csvFile(t, "bom.csv")
	if err := os.WriteFile(bom, append([]byte("\xEF\xBB\xBF"), strings.Join(good, "\r\n")+"\r\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	out = loadFile(t, getenv, bom, "bom")
	if !strings.Contains(out, "run bom: 3 rows loaded as jobs") {
		t.Errorf("the file with a BOM: %s", out)
	}
	rows, err := readRows(bom)
	if err != nil || len(rows) != 3 || !rows[1].Amount.Equal(decimal.RequireFromString("10.001")) || rows[1].Currency != "KWD" {
		t.Errorf("read back: %v, %+v", err, rows)
	}
}
