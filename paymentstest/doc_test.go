package paymentstest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxExported bounds the package's exported identifiers (issue 35: a small
// fake, at most 50).
const maxExported = 50

// exportedIdentifiers lists what `go doc -all` shows of the package in dir,
// counted as issue 35 counts it: every exported const, var, func, type, and
// method of an exported type (struct fields are parts of their type, not
// identifiers of their own).
func exportedIdentifiers(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/paymentsapi/payments-go/paymentstest")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				if token.IsExported(n) {
					ids = append(ids, n)
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			// Format and LogValue are how fmt and log/slog print a value
			// (masked): nothing a test calls, not surface to learn.
			if prefix != "" && (f.Name == "Format" || f.Name == "LogValue") {
				continue
			}
			ids = append(ids, prefix+f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, typ := range p.Types {
		ids = append(ids, typ.Name)
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	slices.Sort(ids)
	return ids
}

// TestExportedIdentifiersAtMost50: paymentstest stays a small fake.
func TestExportedIdentifiersAtMost50(t *testing.T) {
	ids := exportedIdentifiers(t, ".")
	t.Logf("%d exported identifiers: %s", len(ids), strings.Join(ids, " "))
	if len(ids) > maxExported {
		t.Errorf("paymentstest exports %d identifiers, more than %d: %s", len(ids), maxExported, strings.Join(ids, " "))
	}
	for _, id := range ids {
		name := id[strings.LastIndex(id, ".")+1:]
		if (strings.HasPrefix(name, "Set") && len(name) > 3 && unicode.IsUpper(rune(name[3]))) || strings.HasSuffix(name, "Clock") {
			t.Errorf("%s: no Set… twin of a With… option, and no clock seam, in paymentstest", id)
		}
	}
}
