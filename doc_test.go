package payments_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The journey in the package documentation compiles: the test builds it as
// the body of a function, in a throwaway package inside the module.
func TestPackageDocJourneyCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command")
	}
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	code := docCode(f.Doc)
	for _, want := range []string{"NewClientFromEnv", "Recipients.Create", "Payments.Initiate", "Payments.Confirm", "payment.Status", "errors.As"} {
		if !strings.Contains(code, want) {
			t.Errorf("the package documentation's code no longer shows %s", want)
		}
	}

	dir, err := os.MkdirTemp(".", ".doccheck-") // a dot: ./... never matches it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := `package main

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

func journey(ctx context.Context) error {
` + code + `	return nil
}

func main() { _ = journey(context.Background()) }
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-o", os.DevNull, "./"+filepath.Base(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the package documentation's code does not compile: %v\n%s\n%s", err, out, src)
	}
}

// docCode returns the indented (code) lines of a doc comment, without their
// first tab.
func docCode(doc *ast.CommentGroup) string {
	var b strings.Builder
	for _, c := range doc.List {
		line := strings.TrimPrefix(c.Text, "//")
		if strings.HasPrefix(line, "\t") {
			b.WriteString(line[1:] + "\n")
		}
	}
	return b.String()
}
