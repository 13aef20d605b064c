package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// The report neutralises every cell a spreadsheet would run as a formula
// (a quote before =, +, -, @, a tab or a carriage return, as OWASP
// recommends), and readReport gives back each id as it was, a genuine
// leading quote included.
func TestReportCellsAreNotFormulas(t *testing.T) {
	ids := []string{`=HYPERLINK("https://evil.example/","pay")`, `=cmd|' /C calc'!A0`, "+1", "-1", "@SUM(A1:A2)", "'quoted", "plain-0001"}
	var rep []reportRow
	for i, id := range ids {
		rep = append(rep, reportRow{
			row:   row{RecipientID: "=" + ids[(i+1)%len(ids)], Amount: decimal.RequireFromString("10.00"), Currency: "NGN", PayoutID: id},
			State: stateRefused, Cause: "-refused: " + id,
		})
	}
	path := filepath.Join(t.TempDir(), "report.csv")
	if err := writeReport(path, rep); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
		for _, cell := range strings.Split(line, ",") {
			cell = strings.TrimPrefix(cell, `"`) // a quoted cell: its first character is the next
			if cell != "" && strings.ContainsAny(cell[:1], "=+-@\t\r") {
				t.Errorf("a cell a spreadsheet runs: %q in line %q", cell, line)
			}
		}
	}
	got, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rep) {
		t.Fatalf("%d rows read back, want %d", len(got), len(rep))
	}
	for i, r := range rep {
		if got[i][0] != r.PayoutID || got[i][1] != r.RecipientID || got[i][9] != r.Cause {
			t.Errorf("row %d read back as %q, %q, %q; want %q, %q, %q", i, got[i][0], got[i][1], got[i][9], r.PayoutID, r.RecipientID, r.Cause)
		}
	}
}
