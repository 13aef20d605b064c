package payments_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the root module's path.
const modulePath = "github.com/paymentsapi/payments-go"

// modulePaths maps the directory of every go.mod of the repository (relative
// to the root, "." for the root) to its module path.
func modulePaths(t *testing.T) map[string]string {
	t.Helper()
	mods := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
				mods[filepath.Dir(path)] = strings.Trim(strings.TrimSpace(mod), `"`)
				return nil
			}
		}
		t.Errorf("%s has no module line", path)
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// owner returns the module, among mods' paths, that holds the package at
// importPath: the longest module path that is the import path or a prefix of
// it at a slash.
func owner(mods map[string]string, importPath string) string {
	best := ""
	for _, m := range mods {
		if (importPath == m || strings.HasPrefix(importPath, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best
}

// isInternal reports whether importPath is, or is under, an internal
// directory.
func isInternal(importPath string) bool {
	return strings.HasSuffix(importPath, "/internal") || strings.Contains(importPath, "/internal/")
}

// TestNoInternalImportAcrossModules: no non-test file of one module imports an
// internal package of another. The modules are released on their own (a
// store or the payments command at one version beside the root module at
// another), and an internal package is a contract that nothing versions: a
// module that needs a piece of another's internals keeps a copy (which says
// so, and a test keeps it equal: TestLeaseCopiesMatch, TestEventKindsCopy and
// TestLoopbackCopy in cmd/payments) or uses a public API.
//
// _test.go files may import them (internal/testservers,
// eventstore/internal/storetest, outcome/internal/outcometest, and the
// originals the copies are checked against): a test runs inside this
// checkout, where go.work joins the modules at the same commit, and is never
// linked into a merchant's program.
func TestNoInternalImportAcrossModules(t *testing.T) {
	mods := modulePaths(t)
	if len(mods) < 5 || mods["."] != modulePath {
		t.Fatalf("found modules %v; want the root (%s) and the others", mods, modulePath)
	}
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		// The file's module: the nearest directory above it with a go.mod.
		dir := filepath.Dir(path)
		for {
			if _, ok := mods[dir]; ok || dir == "." {
				break
			}
			dir = filepath.Dir(dir)
		}
		mine := mods[dir]
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if !isInternal(p) {
				continue
			}
			if theirs := owner(mods, p); theirs != "" && theirs != mine {
				t.Errorf("%s (module %s) imports %s, an internal package of module %s: keep a copy in %s, or make it a public API", path, mine, p, theirs, mine)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d non-test Go files; the walk missed the repository", files)
	}
}

// TestOwnerFindsTheNearestModule: the check above tells a package of the root
// module from one of a nested module, so that it can fail.
func TestOwnerFindsTheNearestModule(t *testing.T) {
	mods := map[string]string{".": modulePath, "eventstore/pgstore": modulePath + "/eventstore/pgstore"}
	for importPath, want := range map[string]string{
		modulePath + "/internal/eventkind":          modulePath,
		modulePath + "/eventstore/internal/lease":   modulePath,
		modulePath + "/eventstore/pgstore/internal": modulePath + "/eventstore/pgstore",
		modulePath + "/eventstore/pgstorex/a":       modulePath,
		"example.com/internal/x":                    "",
	} {
		if got := owner(mods, importPath); got != want {
			t.Errorf("owner(%s) = %q, want %q", importPath, got, want)
		}
	}
	if !isInternal(modulePath+"/internal") || !isInternal(modulePath+"/a/internal/b") || isInternal(modulePath+"/internalx") {
		t.Error("isInternal does not tell internal packages from others")
	}
}

// TestLeaseCopiesMatch: the two shared-database stores keep copies of one
// file (lease.go: their checks of a lease, a retention and a timeout, the
// claim token, a call's deadline), which must not drift apart. They are equal
// once each store's own name and the other's are set aside.
func TestLeaseCopiesMatch(t *testing.T) {
	read := func(self, other string) string {
		b, err := os.ReadFile(filepath.Join("eventstore", self, "lease.go"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(strings.ReplaceAll(string(b), self, "SELF"), other, "OTHER")
	}
	pg, redis := read("pgstore", "redisstore"), read("redisstore", "pgstore")
	if pg != redis {
		t.Fatalf("eventstore/pgstore/lease.go and eventstore/redisstore/lease.go differ: change both together\npgstore:\n%s\nredisstore:\n%s", pg, redis)
	}
}
