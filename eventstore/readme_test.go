package eventstore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// readmeSection returns the README section that starts with heading, up to
// the next section.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	s = s[i+1+len(heading):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// codeBlocks returns the fenced blocks of lang in s.
func codeBlocks(s, lang string) []string {
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// exampleBody returns the body of function name in file, one tab of
// indentation removed, as the README shows it.
func exampleBody(t *testing.T, file, name string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			lines := strings.Split(strings.Trim(body, "\n"), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "\t")
			}
			return strings.Join(lines, "\n") + "\n"
		}
	}
	t.Fatalf("%s has no func %s", file, name)
	return ""
}

// The README's code for several replicas is the body of the stores'
// Examples, which the compiler checks; its SQL is what Migrate runs.
func TestREADMEMirrorsExamples(t *testing.T) {
	section := readmeSection(t, "## Running several replicas")
	goBlocks := codeBlocks(section, "go")
	want := []string{
		exampleBody(t, "pgstore/example_test.go", "Example"),
		exampleBody(t, "redisstore/example_test.go", "Example"),
	}
	if len(goBlocks) != len(want) {
		t.Fatalf("the section has %d Go blocks, want %d", len(goBlocks), len(want))
	}
	for i := range want {
		if goBlocks[i] != want[i] {
			t.Errorf("Go block %d differs from its Example:\n--- README\n%s--- Example\n%s", i+1, goBlocks[i], want[i])
		}
	}
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	if sql := codeBlocks(section, "sql"); len(sql) != 1 || sql[0] != s.MigrationSQL() {
		t.Errorf("the section's SQL block is not MigrationSQL():\n%s", s.MigrationSQL())
	}
}
