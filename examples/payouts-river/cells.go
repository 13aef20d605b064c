package main

// The report's cells are kept from being run as formulas when a person opens
// the report in a spreadsheet (CSV injection): neutralise prefixes a single
// quote (') to a cell that starts with =, +, -, @, a tab or a carriage
// return, as OWASP's CSV injection guidance recommends, and to a cell that
// already starts with a quote, so that restore, which removes one leading
// quote whenever there is one, gives back every cell exactly
// (TestCellsRoundTrip). This file is the example's own, not a package of
// the SDK's: copy it with the program.

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

// neutralise returns s as a CSV cell a spreadsheet shows as text.
func neutralise(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r', '\'':
		return "'" + s
	}
	return s
}

// restore returns the value of a cell written by Neutralise.
func restore(s string) string {
	if s != "" && s[0] == '\'' {
		return s[1:]
	}
	return s
}

// cellRow neutralises every cell of a row, in place, and returns it.
func cellRow(cells []string) []string {
	for i, c := range cells {
		cells[i] = neutralise(c)
	}
	return cells
}

// readCSV reads a CSV file written with cellRow: its header must be header;
// the rows after it are returned, each cell restored.
func readCSV(path string, header []string) ([][]string, error) {
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
			rec[i] = restore(c)
		}
	}
	return recs[1:], nil
}
