package payments_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RELIABILITY.md names the test behind each guarantee, and its fault
// matrix figures come from the matrix's own output: these tests keep both
// true. After a run of the matrix loop (see RELIABILITY.md), rewrite the
// summary from its rows with
//
//	go test -run TestRELIABILITYMatrixFigures -update-reliability .
const (
	reliabilityPath = "RELIABILITY.md"
	// matrixRunsPath holds the "matrix row:" lines of the runs that the
	// summary in RELIABILITY.md counts, as the matrix logged them.
	matrixRunsPath = "eventstore/internal/storetest/testdata/matrix-runs.md"
	matrixBegin    = "<!-- matrix summary: generated from " + matrixRunsPath + "; do not edit -->"
	matrixEnd      = "<!-- end of matrix summary -->"
)

var updateReliability = flag.Bool("update-reliability", false,
	"rewrite RELIABILITY.md's fault matrix summary from "+matrixRunsPath)

var (
	citedName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*`)
	citedFile = regexp.MustCompile(`[A-Za-z0-9_./-]+_test\.go`)
	definedFn = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
)

// definedTests returns the test, benchmark and fuzz functions of every
// _test.go file under root (every module of the repository), and the files.
func definedTests(t *testing.T, root string) (names, files map[string]bool) {
	t.Helper()
	names, files = map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = true
		for _, m := range definedFn.FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, files
}

// citationProblems lists the tests md names that are not defined, and the
// test files it names that do not exist (a file may be named from its
// module's root: a suffix of a path is enough).
func citationProblems(md string, names, files map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range citedName.FindAllString(md, -1) {
		if !names[n] && !seen[n] {
			seen[n] = true
			out = append(out, fmt.Sprintf("%s cites %s, which no _test.go in the repository defines", reliabilityPath, n))
		}
	}
	for _, f := range citedFile.FindAllString(md, -1) {
		if seen[f] {
			continue
		}
		seen[f] = true
		found := false
		for have := range files {
			if have == f || strings.HasSuffix(have, "/"+f) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("%s cites the file %s, which does not exist", reliabilityPath, f))
		}
	}
	return out
}

// Every test RELIABILITY.md cites exists, in any module of the repository.
func TestRELIABILITYCitesOnlyTestsThatExist(t *testing.T) {
	if _, err := os.Stat("go.work"); err != nil {
		t.Skip("not in the repository's checkout: the other modules' tests are not here")
	}
	md, err := os.ReadFile(reliabilityPath)
	if err != nil {
		t.Fatal(err)
	}
	names, files := definedTests(t, ".")
	if !names["TestRELIABILITYCitesOnlyTestsThatExist"] || !names["TestFaultMatrix"] {
		t.Fatalf("the walk found %d tests, not this one or the matrix: it is broken", len(names))
	}
	for _, p := range citationProblems(string(md), names, files) {
		t.Error(p)
	}
	// The check itself catches a citation that drifted.
	if p := citationProblems("x_test.go: TestGone; client_test.go: TestRELIABILITYCitesOnlyTestsThatExist", names, files); len(p) != 2 {
		t.Errorf("a missing test and a missing file gave %d problems, want 2: %q", len(p), p)
	}
}

// matrixRun is one row of the matrix's output.
type matrixRun struct {
	store, mode, fault          string
	twice, never, overlaps      int
	recovered                   int
	slowest503                  time.Duration
	givenUp, deliveries, events int
}

// parseMatrixRuns reads the "| store | mode | fault | seed | ... |" rows of
// the matrix's output (storetest.MatrixRow.String).
func parseMatrixRuns(text string) ([]matrixRun, error) {
	var runs []matrixRun
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if _, after, ok := strings.Cut(line, "matrix row: "); ok {
			line = after
		}
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		c := strings.Split(strings.Trim(line, "| "), " | ")
		// 14 cells before the Reconcile column: those runs had no event
		// left to recover (never is 0 in every one), so they count 0.
		if len(c) != 14 && len(c) != 15 {
			return nil, fmt.Errorf("line %d: %d cells, want 15: %q", i+1, len(c), line)
		}
		var r matrixRun
		var err error
		num := func(s string) int {
			n, e := strconv.Atoi(s)
			if e != nil && err == nil {
				err = fmt.Errorf("line %d: %q is not a number", i+1, s)
			}
			return n
		}
		r.store, r.mode, r.fault = c[0], c[1], c[2]
		r.events = num(c[4]) + num(c[5]) + num(c[6])
		r.twice, r.never, r.overlaps = num(c[5]), num(c[6]), num(c[7])
		if r.slowest503, err = time.ParseDuration(c[9]); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		given, total, ok := strings.Cut(c[12], " of ")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not \"n of m\"", i+1, c[12])
		}
		r.givenUp, r.deliveries = num(given), num(total)
		if len(c) == 15 {
			r.recovered = num(c[14])
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// matrixSummary is the table RELIABILITY.md shows for runs: one line per
// store, mode and fault, in the order first seen.
func matrixSummary(runs []matrixRun) string {
	type agg struct {
		matrixRun
		n, minTwice, maxTwice, events int
	}
	var order []string
	by := map[string]*agg{}
	for _, r := range runs {
		k := r.store + "|" + r.mode + "|" + r.fault
		a := by[k]
		if a == nil {
			a = &agg{matrixRun: matrixRun{store: r.store, mode: r.mode, fault: r.fault}, minTwice: r.twice}
			by[k] = a
			order = append(order, k)
		}
		a.n++
		a.events += r.events
		a.never += r.never
		a.overlaps += r.overlaps
		a.minTwice, a.maxTwice = min(a.minTwice, r.twice), max(a.maxTwice, r.twice)
		a.twice += r.twice
		a.slowest503 = max(a.slowest503, r.slowest503)
		a.givenUp += r.givenUp
		a.recovered += r.recovered
	}
	var b strings.Builder
	b.WriteString("| Store | Mode | Fault | Runs | Events | Never processed | Twice: total (fewest–most in a run) | Overlapping runs | Slowest 503 | Deliveries given up | Recovered by Reconcile |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range order {
		a := by[k]
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d (%d–%d) | %d | %v | %d | %d |\n", a.store, a.mode, a.fault, a.n, a.events,
			a.never, a.twice, a.minTwice, a.maxTwice, a.overlaps, a.slowest503, a.givenUp, a.recovered)
	}
	return b.String()
}

// The fault matrix summary in RELIABILITY.md is computed from the rows the
// matrix logged (matrixRunsPath), not typed: it cannot say what no run
// showed.
func TestRELIABILITYMatrixFigures(t *testing.T) {
	md, err := os.ReadFile(reliabilityPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(matrixRunsPath)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := parseMatrixRuns(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatalf("no matrix rows in %s", matrixRunsPath)
	}
	want := matrixSummary(runs)
	before, rest, ok := strings.Cut(string(md), matrixBegin+"\n")
	if !ok {
		t.Fatalf("%s has no line %q", reliabilityPath, matrixBegin)
	}
	got, after, ok := strings.Cut(rest, matrixEnd)
	if !ok {
		t.Fatalf("%s has no line %q", reliabilityPath, matrixEnd)
	}
	if *updateReliability {
		if err := os.WriteFile(reliabilityPath, []byte(before+matrixBegin+"\n"+want+matrixEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s's matrix summary is not what %s's rows give; run go test -run TestRELIABILITYMatrixFigures -update-reliability .\ngot:\n%s\nwant:\n%s", reliabilityPath, matrixRunsPath, got, want)
	}
	for _, r := range runs {
		if r.never > 0 {
			t.Errorf("%s records a run with %d events never processed: %+v", matrixRunsPath, r.never, r)
		}
	}
}
