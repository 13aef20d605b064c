package payments_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"net/http"
	"os"
	"strings"
	"testing"

	payments "github.com/paymentsapi/payments-go"
)

// A receiver for a sender that signs with Standard Webhooks. The README's
// "Standard Webhooks" section shows this function's body.
func ExampleNewStandardVerifier() {
	// The endpoint's secret as the sender shows it: "whsec_" and the base64
	// of the key. While it rotates, give the old one and the new one.
	verifier, err := payments.NewStandardVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
	if err != nil {
		log.Fatal(err)
	}
	// The handler checks webhook-signature and webhook-timestamp (within 5
	// minutes either way), then calls your function once per webhook-id: a
	// retry of an event already processed gets 200 without running it again.
	handler := payments.NewWebhookHandler(verifier, func(ctx context.Context, ev *payments.Event) error {
		log.Printf("event %s (%s)", ev.ID, ev.Type)
		return nil // an error answers 500, and the sender retries
	})
	http.Handle("POST /webhooks", handler)
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// The README's marker for the block that must equal the Example's body, and
// the file and function it names.
const (
	standardExampleMarker = "<!-- example: ExampleNewStandardVerifier -->"
	standardExampleFile   = "webhooks_standard_example_test.go"
	standardExampleFunc   = "ExampleNewStandardVerifier"
)

// TestREADMEShowsExampleNewStandardVerifier: the README's Go block after
// the marker is the body of ExampleNewStandardVerifier, which the compiler
// checks, with one tab of indentation removed. Edit the Example, then copy
// its body into the README.
func TestREADMEShowsExampleNewStandardVerifier(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := blockAfterMarker(string(readme), standardExampleMarker)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	src, err := os.ReadFile(standardExampleFile)
	if err != nil {
		t.Fatal(err)
	}
	body, err := exampleBodyOf(src, standardExampleFunc)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDifferentLine(block, body); d != "" {
		t.Errorf("README.md's block after %s differs from the body of %s in %s: %s\n--- README\n%s--- Example\n%s",
			standardExampleMarker, standardExampleFunc, standardExampleFile, d, block, body)
	}
}

// TestREADMEExampleCheckFailsOnDrift: the comparison above refuses a
// README whose block drifted, is missing, is not right after the marker,
// or has its marker twice.
func TestREADMEExampleCheckFailsOnDrift(t *testing.T) {
	src := []byte("package x\n\nfunc ExampleF() {\n\ta := 1\n\tif a > 0 {\n\t\tprintln(a)\n\t}\n}\n")
	body, err := exampleBodyOf(src, "ExampleF")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a := 1\nif a > 0 {\n\tprintln(a)\n}\n"; body != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	const m = "<!-- example: ExampleF -->"
	good := "# T\n\n" + m + "\n<!-- tested-by: . TestX -->\n\n```go\n" + body + "```\n"
	if b, err := blockAfterMarker(good, m); err != nil || firstDifferentLine(b, body) != "" {
		t.Fatalf("a faithful README was refused: %v %q", err, b)
	}
	for name, md := range map[string]string{
		"drifted":       strings.Replace(good, "println(a)", "println(a + 1)", 1),
		"a line less":   strings.Replace(good, "a := 1\n", "", 1),
		"a line more":   strings.Replace(good, "```\n", "return\n```\n", 1),
		"indented more": strings.Replace(good, "a := 1", "\ta := 1", 1),
	} {
		b, err := blockAfterMarker(md, m)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if firstDifferentLine(b, body) == "" {
			t.Errorf("%s: not noticed", name)
		}
	}
	for name, md := range map[string]string{
		"no marker":             strings.Replace(good, m, "", 1),
		"marker twice":          good + "\n" + m + "\n```go\nx\n```\n",
		"text before the block": strings.Replace(good, "\n\n```go", "\nSome words.\n```go", 1),
		"a shell block":         strings.Replace(good, "```go", "```sh", 1),
		"never closed":          strings.TrimSuffix(good, "```\n"),
	} {
		if _, err := blockAfterMarker(md, m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := exampleBodyOf(src, "ExampleG"); err == nil {
		t.Error("a missing Example was found")
	}
}

// blockAfterMarker returns the Go block that follows marker in md: only
// blank lines and other HTML comment lines may come between them.
func blockAfterMarker(md, marker string) (string, error) {
	lines := strings.Split(md, "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == marker {
			if at >= 0 {
				return "", fmt.Errorf("%s appears twice", marker)
			}
			at = i
		}
	}
	if at < 0 {
		return "", fmt.Errorf("no %s", marker)
	}
	i := at + 1
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l != "" && !(strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->")) {
			break
		}
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "```go" {
		return "", fmt.Errorf("%s is not followed by a ```go block", marker)
	}
	var b strings.Builder
	for i++; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "```" {
			return b.String(), nil
		}
		b.WriteString(lines[i] + "\n")
	}
	return "", errors.New("the block after " + marker + " never closes")
}

// exampleBodyOf returns the lines inside the braces of func name in src,
// each with one leading tab removed.
func exampleBodyOf(src []byte, name string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != name {
			continue
		}
		body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		var b strings.Builder
		for _, l := range strings.Split(strings.Trim(body, "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(l, "\t") + "\n")
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no func %s", name)
}

// firstDifferentLine describes the first line where got and want differ,
// or returns "" when they are equal.
func firstDifferentLine(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d: README %q, Example %q", i+1, gl, wl)
		}
	}
	return ""
}
