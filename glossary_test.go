package payments_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// retiredNames are the second names docs/glossary.md retired: each concept
// has one name, and these must not come back in code, docs or test names.
// CHANGELOG.md names them (it says what replaced them), and so do the
// glossary and this test.
var retiredNames = map[string]*regexp.Regexp{
	"event store (the claim store)": regexp.MustCompile(`(?i)\bevent[ -]stores?\b`),
	"EventStore (the claim store)":  regexp.MustCompile(`EventStore`),
	"ReconcileThrough":              regexp.MustCompile(`ReconcileThrough|outcome\.Reconciler\b`),
	// The claim store's old names. Only the qualified ones: outcome.Store and
	// outcome.MemoryStore keep theirs, so a bare Store or MemoryStore cannot
	// be told apart by grep. The webhook package's own code is held by the
	// API snapshot (api/), where these names no longer exist.
	"webhook.Store (webhook.ClaimStore)":                          regexp.MustCompile(`\bwebhook\.(Store|MemoryStore|MemoryStoreOption|NewMemoryStore|WithStore|WithStoreTimeout|DefaultStoreTimeout)\b|\bDefaultMemoryStoreSize\b|\bMemoryStoreOption\b`),
	"pgstore.Store, redisstore.Store (ClaimStore)":                regexp.MustCompile(`\b(pgstore|redisstore)\.(Store|New)\b`),
	"TestMemoryStore… of package webhook (TestMemoryClaimStore…)": regexp.MustCompile(`\bTestMemoryStore(Claims|ReplayWindow|ReplayAfterManyEvents|Lease|LeasesIgnoreWallClockSteps)\b`),
}

// TestGlossaryRetiredNames greps every .go and .md file of the repository
// (every module) for the names the glossary retired.
func TestGlossaryRetiredNames(t *testing.T) {
	skip := map[string]bool{"CHANGELOG.md": true, filepath.Join("docs", "glossary.md"): true, "glossary_test.go": true}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "api") {
				return filepath.SkipDir
			}
			return nil
		}
		if skip[path] || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for name, re := range retiredNames {
				if re.MatchString(line) {
					t.Errorf("%s:%d uses the retired name %s (docs/glossary.md): %s", path, i+1, name, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk is broken", checked)
	}
}

// The glossary's section on the complete PostgreSQL program, the program
// it is derived from, and the most entries it may have (issue 46).
const (
	glossaryPostgresHeading = "## Processing one webhook once on PostgreSQL, and knowing one payment's outcome"
	glossaryProgram         = "examples/pg-queue"
	glossaryMaxEntries      = 15
)

// glossaryImports are the import paths whose names a merchant must learn:
// the SDK's, River's and pgx's. The standard library's are not counted.
var glossaryImports = []string{"github.com/paymentsapi/payments-go", "github.com/riverqueue/", "github.com/jackc/pgx"}

// sqlTableRE finds the tables a SQL statement names.
var sqlTableRE = regexp.MustCompile(`(?i)\b(?:CREATE TABLE(?: IF NOT EXISTS)?|INSERT INTO|UPDATE|DELETE FROM|FROM|JOIN|TRUNCATE)\s+([a-z_][a-z0-9_.]*)`)

// programNames returns every name the program in dir touches, read from
// its non-test files: with go/types, each identifier of the SDK, River or
// pgx it uses (webhook.NewQueueHandler), and each method or field of
// theirs it selects, named by its type (pgstore.Queue.Start,
// payments.Payment.Reference); with go/ast, the environment variables it
// reads (a string literal given to getenv, os.Getenv or os.LookupEnv), the
// tables its SQL names, and its commands (the package doc's indented lines
// "<program> <command>").
func programNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	names := map[string]bool{}
	for _, name := range typedNames(t, dir, fset, files) {
		names[name] = true
	}
	program := filepath.Base(dir)
	for _, f := range files {
		if f.Doc != nil {
			for _, line := range strings.Split(f.Doc.Text(), "\n") {
				if fields := strings.Fields(line); strings.HasPrefix(line, "\t") && len(fields) > 1 && fields[0] == program {
					names[program+" "+fields[1]] = true
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if isGetenv(n.Fun) && len(n.Args) > 0 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						names[v] = true
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					v, _ := strconv.Unquote(n.Value)
					for _, m := range sqlTableRE.FindAllStringSubmatch(v, -1) {
						if table := strings.ToLower(m[1]); table != "set" {
							names[table] = true
						}
					}
				}
			}
			return true
		})
	}
	return slices.Sorted(maps.Keys(names))
}

// typedNames type-checks files, the program in dir, against the export
// data the go command builds for its imports, and returns the names of the
// SDK, River and pgx it uses (programNames).
func typedNames(t *testing.T, dir string, fset *token.FileSet, files []*ast.File) []string {
	t.Helper()
	list := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -export in %s: %v", dir, err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: imp}).Check("main", fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	counted := func(pkg *types.Package) bool {
		return pkg != nil && slices.ContainsFunc(glossaryImports, func(p string) bool { return strings.HasPrefix(pkg.Path(), p) })
	}
	names := map[string]bool{}
	for _, obj := range info.Uses {
		if counted(obj.Pkg()) && obj.Parent() == obj.Pkg().Scope() { // a package-level name: a type, function, constant or variable
			names[obj.Pkg().Name()+"."+obj.Name()] = true
		}
	}
	member := func(recv types.Type, name string) { // a field or method of a counted type
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		if named, ok := recv.(*types.Named); ok && counted(named.Obj().Pkg()) {
			names[named.Obj().Pkg().Name()+"."+named.Obj().Name()+"."+name] = true
		}
	}
	for _, sel := range info.Selections {
		recv := sel.Recv()
		if fn, ok := sel.Obj().(*types.Func); ok { // a method: named by the type that declares it
			recv = fn.Type().(*types.Signature).Recv().Type()
		}
		member(recv, sel.Obj().Name())
	}
	for _, f := range files { // the fields set in a composite literal: pgstore.QueueConfig{Logger: ...}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				for _, elt := range lit.Elts {
					if kv, ok := elt.(*ast.KeyValueExpr); ok {
						if key, ok := kv.Key.(*ast.Ident); ok {
							member(info.Types[lit].Type, key.Name)
						}
					}
				}
			}
			return true
		})
	}
	return slices.Sorted(maps.Keys(names))
}

// isGetenv reports whether fun reads an environment variable: getenv (a
// function passed in, as a testable program does), os.Getenv or
// os.LookupEnv.
func isGetenv(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "getenv"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "os" && (f.Sel.Name == "Getenv" || f.Sel.Name == "LookupEnv")
	}
	return false
}

// glossaryEntries returns the rows of the first table of the glossary's
// section heading, and the names (code spans) each holds.
func glossaryEntries(t *testing.T, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := readmecheck.Section(string(b), heading)
	if !ok {
		t.Fatalf("docs/glossary.md has no section %q", heading)
	}
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(sec, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		if !inTable { // the header row
			inTable = true
			continue
		}
		if strings.Trim(line, "|- ") == "" { // the delimiter row
			continue
		}
		var spans []string
		for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
			spans = append(spans, m[1])
		}
		rows = append(rows, spans)
	}
	return rows
}

var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// TestGlossaryNamesEveryNameOfThePostgreSQLProgram: docs/glossary.md lists
// every name the complete PostgreSQL program (examples/pg-queue) touches,
// read from its source by programNames, in at most 15 entries (issue 46).
// A name the example starts to use fails it until the glossary has it.
func TestGlossaryNamesEveryNameOfThePostgreSQLProgram(t *testing.T) {
	names := programNames(t, glossaryProgram)
	if len(names) < 10 {
		t.Fatalf("read %d names from %s: the reader is broken: %q", len(names), glossaryProgram, names)
	}
	rows := glossaryEntries(t, glossaryPostgresHeading)
	if len(rows) == 0 {
		t.Fatal("no table in the glossary's PostgreSQL section: the reader is broken")
	}
	if len(rows) > glossaryMaxEntries {
		t.Errorf("the glossary's PostgreSQL section has %d entries, more than %d: a merchant must hold them in their head; make the program need fewer", len(rows), glossaryMaxEntries)
	}
	listed := map[string]bool{}
	for _, spans := range rows {
		for _, s := range spans {
			listed[s] = true
		}
	}
	for _, name := range names {
		if !listed[name] {
			t.Errorf("%s uses %s, which docs/glossary.md's PostgreSQL section does not list: add it to the entry of its concept (as `%s`)", glossaryProgram, name, name)
		}
	}
}
