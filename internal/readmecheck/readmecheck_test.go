package readmecheck_test

import (
	"os"
	"strings"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// TestCheckerCatchesDrift proves that Check fails on the
// mistakes it exists for, on scratch copies of the README.
func TestCheckerCatchesDrift(t *testing.T) {
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(md)
	repo := readmecheck.Checker{Root: "../.."}
	if p := repo.Check(readme); len(p) != 0 {
		t.Fatalf("the README itself fails: %v", p)
	}
	// The first block with a source marker, and its text in the README.
	blocks, err := readmecheck.Blocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	var first readmecheck.Block
	for _, b := range blocks {
		if b.Lang == "go" && strings.HasPrefix(b.Marker, "<!-- source:") {
			first = b
			break
		}
	}
	if first.Code == "" {
		t.Fatal("no Go block with a source marker")
	}
	// The text from the marker to the closing fence.
	all := strings.Split(readme, "\n")
	from := first.Line - 2
	for from > 0 && strings.TrimSpace(all[from]) != first.Marker {
		from--
	}
	to := first.Line + strings.Count(first.Code, "\n") // the closing fence
	marked := strings.Join(all[from:to+1], "\n") + "\n"
	if strings.Count(readme, marked) != 1 || !strings.HasSuffix(marked, "\n```\n") {
		t.Fatalf("cannot find the block of line %d once", first.Line)
	}
	lines := strings.Split(first.Code, "\n")

	mutations := map[string]struct {
		old, new string // replaced once in the README
		want     string // in the problem reported
	}{
		"a line changed": {
			marked, strings.Replace(marked, lines[1], lines[1]+" // edited", 1),
			"the block differs from",
		},
		"a line added": {
			marked, strings.Replace(marked, "```go\n", "```go\nfmt.Println(\"extra\")\n", 1),
			"line 1 of the block",
		},
		"a line removed": {
			marked, strings.Replace(marked, lines[len(lines)-2]+"\n", "", 1),
			"the block differs from",
		},
		"re-indented with spaces": {
			marked, strings.ReplaceAll(marked, "\t", "    "),
			"the block differs from",
		},
		"no marker": {
			marked, strings.TrimPrefix(marked, first.Marker+"\n"),
			"no marker",
		},
		"a marker naming no function": {
			marked, strings.Replace(marked, " -->", "Gone -->", 1),
			"no func ",
		},
		"a marker naming no file": {
			marked, strings.Replace(marked, "<!-- source: ", "<!-- source: gone/", 1),
			"no such file",
		},
		"a tested-by marker naming no test": {
			marked, strings.Replace(marked, first.Marker, "<!-- tested-by: webhook TestNothingAtAll -->", 1),
			"no func TestNothingAtAll",
		},
		"a new block without a marker": {
			"\n## Errors\n", "\n```go\nfmt.Println(1)\n```\n\n## Errors\n",
			"no marker",
		},
	}
	for name, m := range mutations {
		t.Run(name, func(t *testing.T) {
			if m.new == m.old || !strings.Contains(readme, m.old) {
				t.Fatal("the mutation does not apply")
			}
			problems := repo.Check(strings.Replace(readme, m.old, m.new, 1))
			if len(problems) != 1 || !strings.Contains(problems[0], m.want) {
				t.Errorf("problems %q, want one containing %q", problems, m.want)
			}
		})
	}
}

// The marker kinds the README does not use yet still work.
func TestCheckerSources(t *testing.T) {
	const src = `package demo

import "fmt"

// helper says hello.
func helper() {
	fmt.Println("hello")
}

func ExampleRuns() {
	helper()
	// region shown
	fmt.Println("shown")
	// endregion
	// Output:
	// hello
	// shown
}

func ExampleCompiledOnly() {
	fmt.Println("not run")
}

func unused() {}
`
	read := func(path string) ([]byte, error) {
		if path != "demo/demo_test.go" {
			return nil, os.ErrNotExist
		}
		return []byte(src), nil
	}
	for _, tc := range []struct {
		marker, code, problem string
	}{
		{"<!-- source: demo/demo_test.go region:shown -->", "fmt.Println(\"shown\")\n", ""},
		{"<!-- source: demo/demo_test.go region:shown -->", "fmt.Println(\"other\")\n", "differs"},
		{"<!-- source: demo/demo_test.go region:hidden -->", "x\n", "no // region hidden"},
		{"<!-- source: demo/demo_test.go func:helper -->", "// helper says hello.\nfunc helper() {\n\tfmt.Println(\"hello\")\n}\n", ""},
		{"<!-- source: demo/demo_test.go func:helper region:shown -->", "// helper says hello.\nfunc helper() {\n\tfmt.Println(\"hello\")\n}\n\nfmt.Println(\"shown\")\n", ""},
		{"<!-- source: demo/demo_test.go func:unused -->", "func unused() {}\n", "used by no Example"},
		{"<!-- source: demo/demo_test.go ExampleCompiledOnly -->", "fmt.Println(\"not run\")\n", "no test runs it"},
		{"<!-- source: demo/demo_test.go ExampleRuns -->", "helper()\n// region shown\nfmt.Println(\"shown\")\n// endregion\n// Output:\n// hello\n// shown\n", ""},
		{"<!-- source: demo/demo_test.go -->", "x\n", "want a path and at least one name"},
		{"<!-- source: demo/demo_test.go file: -->", src, ""},
		// A source that only compiles, run by a test elsewhere: the block
		// is still held to the source.
		{"<!-- source: demo/demo_test.go ExampleCompiledOnly -->\n<!-- tested-by: webhook TestWebhookHandlerStandardWebhooksDedupesOnWebhookID -->", "fmt.Println(\"not run\")\n", ""},
		{"<!-- source: demo/demo_test.go ExampleCompiledOnly -->\n<!-- tested-by: webhook TestWebhookHandlerStandardWebhooksDedupesOnWebhookID -->", "fmt.Println(\"drifted\")\n", "differs"},
		{"<!-- source: demo/demo_test.go ExampleCompiledOnly -->\n<!-- tested-by: webhook TestNothingAtAll -->", "fmt.Println(\"not run\")\n", "no func TestNothingAtAll"},
		{"<!-- source: demo/demo_test.go file: -->", strings.Replace(src, "hello", "bye", 1), "differs"},
	} {
		md := "# demo\n\n" + tc.marker + "\n\n```go\n" + tc.code + "```\n"
		problems := readmecheck.Checker{Root: "../..", ReadFile: read}.Check(md)
		switch {
		case tc.problem == "" && len(problems) != 0:
			t.Errorf("%s: unexpected problems %q", tc.marker, problems)
		case tc.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.problem)):
			t.Errorf("%s: problems %q, want one containing %q", tc.marker, problems, tc.problem)
		}
	}
}

// -update-readme rewrites drifted blocks, and only the blocks with a source
// marker.
func TestRewrite(t *testing.T) {
	const src = "package demo\n\nfunc ExampleShown() {\n\tprintln(1)\n\tprintln(2)\n\t// Output:\n}\n"
	read := func(string) ([]byte, error) { return []byte(src), nil }
	md := "# demo\n\n<!-- source: demo_test.go ExampleShown -->\n\n```go\nprintln(0)\n```\n\n" +
		"```sh\necho untouched\n```\n\n<!-- tested-by: webhook TestWebhookHandlerStandardWebhooksDedupesOnWebhookID -->\n```go\nx := 1\n```\n"
	got, err := readmecheck.Checker{Root: "../..", ReadFile: read}.Rewrite(md)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(md, "println(0)\n", "println(1)\nprintln(2)\n// Output:\n", 1)
	if got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if problems := (readmecheck.Checker{Root: "../..", ReadFile: read}).Check(got); len(problems) != 0 {
		t.Errorf("the rewritten text still fails: %q", problems)
	}
}

func TestDedent(t *testing.T) {
	for in, want := range map[string]string{
		"\n\t\ta\n\t\t\tb\n\n\t\tc  \n\n": "a\n\tb\n\nc\n",
		"    x\n  y\n":                    "  x\ny\n",
		"\t x\n\ty\n":                     " x\ny\n",
		"":                                "",
	} {
		if got := readmecheck.Dedent(in); got != want {
			t.Errorf("dedent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSectionAndCode(t *testing.T) {
	md := "# T\n\nintro\n\n## A\n\ntext\n\n```sh\n# not a heading\necho a\n```\n\n### A.1\n\n```go\nx := 1\n```\n\n## B\n\n```sh\necho b\n```\n"
	a, ok := readmecheck.Section(md, "## A")
	if !ok {
		t.Fatal("no section ## A")
	}
	if want := "\ntext\n\n```sh\n# not a heading\necho a\n```\n\n### A.1\n\n```go\nx := 1\n```\n\n"; a != want {
		t.Errorf("section A = %q, want %q", a, want)
	}
	if got := readmecheck.Code(a, "sh"); len(got) != 1 || got[0] != "# not a heading\necho a\n" {
		t.Errorf("sh blocks of A = %q", got)
	}
	if got := readmecheck.Code(md, "sh"); len(got) != 2 || got[1] != "echo b\n" {
		t.Errorf("sh blocks = %q", got)
	}
	if _, ok := readmecheck.Section(md, "## C"); ok {
		t.Error("found a section that is not there")
	}
	if b, _ := readmecheck.Section(md, "## B"); b != "\n```sh\necho b\n```\n" {
		t.Errorf("section B = %q", b)
	}
}
