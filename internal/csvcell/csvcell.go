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
