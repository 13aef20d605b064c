// Package csvcell keeps the cells of a CSV file that a person opens in a
// spreadsheet from being run as formulas (CSV injection), and reads them
// back unchanged.
//
// Neutralise prefixes a single quote (') to a cell that starts with =, +,
// -, @, a tab or a carriage return, as OWASP's CSV injection guidance
// recommends: a spreadsheet then shows the cell as text. It prefixes one to
// a cell that already starts with a quote too, so that Restore, which
// removes one leading quote whenever there is one, gives back every cell
// exactly, a genuine leading quote included (TestRoundTrip).
package csvcell

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

// Neutralise returns s as a CSV cell a spreadsheet shows as text.
func Neutralise(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r', '\'':
		return "'" + s
	}
	return s
}

// Restore returns the value of a cell written by Neutralise.
func Restore(s string) string {
	if s != "" && s[0] == '\'' {
		return s[1:]
	}
	return s
}

// Row neutralises every cell of a row, in place, and returns it.
func Row(cells []string) []string {
	for i, c := range cells {
		cells[i] = Neutralise(c)
	}
	return cells
}

// ReadFile reads a CSV file written with Row: its header must be header;
// the rows after it are returned, each cell Restored.
func ReadFile(path string, header []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = len(header)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("%s: the header must be %s", path, strings.Join(header, ","))
	}
	for _, rec := range recs[1:] {
		for i, c := range rec {
			rec[i] = Restore(c)
		}
	}
	return recs[1:], nil
}
