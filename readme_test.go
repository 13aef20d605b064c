package payments_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every ```go block of README.md is a copy of code that the tests compile
// and run. The last non-blank line before a block names its source:
//
//	<!-- source: FILE NAME -->           the body of func NAME in FILE
//	<!-- source: FILE func:NAME -->      the whole declaration of func NAME, doc comment included
//	<!-- source: FILE region:NAME -->    the lines between "// region NAME" and "// endregion"
//	<!-- tested-by: DIR TestName -->     a block that TestName in the package at DIR checks itself
//
// A source marker may name several parts of one file; the block is then
// those parts in order, separated by a blank line. FILE and DIR are relative
// to the repository root. A body must be an Example with an "// Output:"
// comment (so that go test runs it and checks what it prints) or a Test; a
// whole function must be used by such an Example or Test of its file.
//
// After changing a source, copy it into the README with
//
//	go test -run TestREADMEGoBlocks -update-readme .

const readmePath = "README.md"

var updateREADME = flag.Bool("update-readme", false,
	"rewrite the README's Go blocks that have a source marker from their sources, then check them")

var (
	readmeMarkerRE = regexp.MustCompile(`^<!-- (source|tested-by): (.*?) -->$`)
	readmeFenceRE  = regexp.MustCompile("^\\s*```([a-z]*)\\s*$")
)

// readmeBlock is one fenced code block of the README.
type readmeBlock struct {
	Line    int    // of the opening fence, counting from 1
	Lang    string // "go", "sh", ...
	Heading string // the section it is in
	Marker  string // the marker line before it, or ""
	Code    string // the lines between the fences, each ending in "\n"
}

// readmeBlocks returns the fenced blocks of a Markdown text, with the marker
// that precedes each (the last non-blank line before its fence, when that
// line is a marker).
func readmeBlocks(md string) ([]readmeBlock, error) {
	var (
		blocks  []readmeBlock
		cur     *readmeBlock
		heading string
		prev    string // the last non-blank line outside blocks
	)
	for i, line := range strings.Split(md, "\n") {
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				blocks = append(blocks, *cur)
				cur, prev = nil, ""
				continue
			}
			cur.Code += line + "\n"
			continue
		}
		if m := readmeFenceRE.FindStringSubmatch(line); m != nil {
			cur = &readmeBlock{Line: i + 1, Lang: m[1], Heading: heading}
			if readmeMarkerRE.MatchString(prev) {
				cur.Marker = prev
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			heading = line
		}
		if strings.TrimSpace(line) != "" {
			prev = strings.TrimSpace(line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the block never closes", cur.Line)
	}
	return blocks, nil
}

// sourceReader reads a file of the repository by its path from the root.
type sourceReader func(path string) ([]byte, error)

// checkREADME returns a problem for every Go block of md that has no marker,
// whose marker names nothing, or that differs from its source.
func checkREADME(md string, read sourceReader) []string {
	blocks, err := readmeBlocks(md)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, b := range blocks {
		if b.Lang != "go" {
			continue
		}
		where := fmt.Sprintf("README.md:%d (%s)", b.Line, b.Heading)
		if err := checkBlock(b, read); err != nil {
			problems = append(problems, where+": "+err.Error())
		}
	}
	return problems
}

func checkBlock(b readmeBlock, read sourceReader) error {
	m := readmeMarkerRE.FindStringSubmatch(b.Marker)
	if m == nil {
		return fmt.Errorf("no marker: put <!-- source: FILE NAME --> (or <!-- tested-by: DIR TestName --> where another test checks it) on the line before the block")
	}
	fields := strings.Fields(m[2])
	if len(fields) < 2 {
		return fmt.Errorf("marker %q: want a path and at least one name", b.Marker)
	}
	if m[1] == "tested-by" {
		if len(fields) != 2 || !strings.HasPrefix(fields[1], "Test") {
			return fmt.Errorf("marker %q: want <!-- tested-by: DIR TestName -->", b.Marker)
		}
		return findTest(fields[0], fields[1])
	}
	want, err := extractSource(fields[0], fields[1:], read)
	if err != nil {
		return err
	}
	if d := firstDifference(dedent(b.Code), want); d != "" {
		return fmt.Errorf("the block differs from %s %s: %s", fields[0], strings.Join(fields[1:], " "), d)
	}
	return nil
}

// extractSource returns the named parts of file, dedented and joined by a
// blank line.
func extractSource(file string, names []string, read sourceReader) (string, error) {
	src, err := read(file)
	if err != nil {
		return "", err
	}
	var f *ast.File
	fset := token.NewFileSet()
	if strings.HasSuffix(file, ".go") {
		if f, err = parser.ParseFile(fset, file, src, parser.ParseComments); err != nil {
			return "", err
		}
	}
	var parts []string
	for _, name := range names {
		var part string
		switch {
		case strings.HasPrefix(name, "region:"):
			part, err = region(string(src), strings.TrimPrefix(name, "region:"))
		case f == nil:
			err = fmt.Errorf("%s is not a Go file: name a region:", file)
		case strings.HasPrefix(name, "func:"):
			part, err = funcDecl(f, fset, src, strings.TrimPrefix(name, "func:"))
		default:
			part, err = funcBody(f, fset, src, name)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		parts = append(parts, dedent(part))
	}
	return strings.Join(parts, "\n"), nil
}

func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == name {
			return fn
		}
	}
	return nil
}

// funcBody returns the lines inside the braces of func name, which must be
// an Example that checks its output, or a Test.
func funcBody(f *ast.File, fset *token.FileSet, src []byte, name string) (string, error) {
	fn := findFunc(f, name)
	if fn == nil {
		return "", fmt.Errorf("no func %s", name)
	}
	if !runsAndChecks(f, fn) {
		return "", fmt.Errorf("func %s is neither an Example with an // Output: comment nor a Test, so no test runs it", name)
	}
	body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
	return string(body), nil
}

// funcDecl returns the declaration of func name, from its doc comment to its
// closing brace. An Example that checks its output, or a Test, of the same
// file must use it, directly or through other functions of the file.
func funcDecl(f *ast.File, fset *token.FileSet, src []byte, name string) (string, error) {
	fn := findFunc(f, name)
	if fn == nil {
		return "", fmt.Errorf("no func %s", name)
	}
	if !reachedByRunner(f, name) {
		return "", fmt.Errorf("func %s is used by no Example with an // Output: comment and no Test of the file", name)
	}
	start := fn.Pos()
	if fn.Doc != nil {
		start = fn.Doc.Pos()
	}
	return string(src[fset.Position(start).Offset:fset.Position(fn.End()).Offset]), nil
}

// reachedByRunner reports whether a function that go test runs and checks
// (see runsAndChecks) uses func name, directly or through other functions
// of the file.
func reachedByRunner(f *ast.File, name string) bool {
	uses := map[string][]string{} // func -> the funcs of the file it names
	var queue []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && findFunc(f, id.Name) != nil {
				uses[fn.Name.Name] = append(uses[fn.Name.Name], id.Name)
			}
			return true
		})
		if runsAndChecks(f, fn) {
			queue = append(queue, fn.Name.Name)
		}
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, used := range uses[cur] {
			if used == name {
				return true
			}
			if !seen[used] {
				seen[used] = true
				queue = append(queue, used)
			}
		}
	}
	return false
}

// runsAndChecks reports whether go test runs fn and checks it: a Test, or an
// Example with an output comment.
func runsAndChecks(f *ast.File, fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if strings.HasPrefix(name, "Test") {
		return true
	}
	if !strings.HasPrefix(name, "Example") {
		return false
	}
	for _, cg := range f.Comments {
		if cg.Pos() < fn.Body.Lbrace || cg.End() > fn.Body.Rbrace {
			continue
		}
		for _, c := range cg.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if strings.HasPrefix(text, "Output:") || strings.HasPrefix(text, "Unordered output:") {
				return true
			}
		}
	}
	return false
}

// region returns the lines between "// region name" and the next
// "// endregion".
func region(src, name string) (string, error) {
	var (
		out    []string
		inside bool
	)
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !inside && t == "// region "+name:
			inside = true
		case inside && t == "// endregion":
			return strings.Join(out, "\n"), nil
		case inside:
			out = append(out, line)
		}
	}
	if inside {
		return "", fmt.Errorf("region %s has no // endregion", name)
	}
	return "", fmt.Errorf("no // region %s", name)
}

// findTest checks that the package at dir has a test function name.
func findTest(dir, name string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			return err
		}
		if fn := findFunc(f, name); fn != nil {
			return nil
		}
	}
	return fmt.Errorf("no func %s in %s/*_test.go", name, dir)
}

// dedent drops blank lines at both ends, trailing spaces, and the
// indentation that every non-blank line shares.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	prefix, first := "", true
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		lines[i] = l
		if l == "" {
			continue
		}
		if first {
			prefix, first = l[:len(l)-len(strings.TrimLeft(l, " \t"))], false
		}
		for !strings.HasPrefix(l, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// firstDifference describes the first line where got and want differ, or
// returns "" when they are equal.
func firstDifference(got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of the block is\n\t%q\nbut the source has\n\t%q", i+1, gl, wl)
		}
	}
	return "they differ"
}

func readRepoFile(path string) ([]byte, error) {
	if filepath.IsAbs(path) || strings.Contains(path, "..") {
		return nil, fmt.Errorf("%s: name a file inside the repository", path)
	}
	return os.ReadFile(path)
}

// rewriteREADME replaces each Go block that has a source marker with its
// source.
func rewriteREADME(md string, read sourceReader) (string, error) {
	blocks, err := readmeBlocks(md)
	if err != nil {
		return "", err
	}
	lines := strings.Split(md, "\n")
	// From the last block up, so that the line numbers of the others hold.
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		m := readmeMarkerRE.FindStringSubmatch(b.Marker)
		if b.Lang != "go" || m == nil || m[1] != "source" {
			continue
		}
		fields := strings.Fields(m[2])
		if len(fields) < 2 {
			return "", fmt.Errorf("README.md:%d: marker %q names no source", b.Line, b.Marker)
		}
		src, err := extractSource(fields[0], fields[1:], read)
		if err != nil {
			return "", fmt.Errorf("README.md:%d: %w", b.Line, err)
		}
		n := strings.Count(b.Code, "\n") // lines between the fences
		code := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
		lines = append(lines[:b.Line], append(code, lines[b.Line+n:]...)...)
	}
	return strings.Join(lines, "\n"), nil
}

// TestREADMEGoBlocks holds every Go block of the README to its source. With
// -update-readme it first rewrites them from their sources.
func TestREADMEGoBlocks(t *testing.T) {
	md, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateREADME {
		updated, err := rewriteREADME(string(md), readRepoFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readmePath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		md = []byte(updated)
	}
	blocks, err := readmeBlocks(string(md))
	if err != nil {
		t.Fatal(err)
	}
	var goBlocks int
	for _, b := range blocks {
		if b.Lang == "go" {
			goBlocks++
		}
	}
	if goBlocks < 8 {
		t.Fatalf("found %d Go blocks in README.md: the block parser is broken", goBlocks)
	}
	for _, p := range checkREADME(string(md), readRepoFile) {
		t.Error(p)
	}
}

// TestREADMECheckerCatchesDrift proves that checkREADME fails on the
// mistakes it exists for, on scratch copies of the README.
func TestREADMECheckerCatchesDrift(t *testing.T) {
	md, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(md)
	if p := checkREADME(readme, readRepoFile); len(p) != 0 {
		t.Fatalf("the README itself fails: %v", p)
	}
	// The first block with a source marker, and its text in the README.
	blocks, err := readmeBlocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	var first readmeBlock
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
			marked, strings.Replace(marked, first.Marker, "<!-- tested-by: eventstore TestNothingAtAll -->", 1),
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
			problems := checkREADME(strings.Replace(readme, m.old, m.new, 1), readRepoFile)
			if len(problems) != 1 || !strings.Contains(problems[0], m.want) {
				t.Errorf("problems %q, want one containing %q", problems, m.want)
			}
		})
	}
}

// The marker kinds the README does not use yet still work.
func TestREADMECheckerSources(t *testing.T) {
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
	} {
		md := "# demo\n\n" + tc.marker + "\n\n```go\n" + tc.code + "```\n"
		problems := checkREADME(md, read)
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
func TestRewriteREADME(t *testing.T) {
	const src = "package demo\n\nfunc ExampleShown() {\n\tprintln(1)\n\tprintln(2)\n\t// Output:\n}\n"
	read := func(string) ([]byte, error) { return []byte(src), nil }
	md := "# demo\n\n<!-- source: demo_test.go ExampleShown -->\n\n```go\nprintln(0)\n```\n\n" +
		"```sh\necho untouched\n```\n\n<!-- tested-by: webhook TestWebhookHandlerStandardWebhooksDedupesOnWebhookID -->\n```go\nx := 1\n```\n"
	got, err := rewriteREADME(md, read)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(md, "println(0)\n", "println(1)\nprintln(2)\n// Output:\n", 1)
	if got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if problems := checkREADME(got, read); len(problems) != 0 {
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
		if got := dedent(in); got != want {
			t.Errorf("dedent(%q) = %q, want %q", in, got, want)
		}
	}
}

// The README opens with the two commands a newcomer needs, and CI runs the
// same test command (and the quickstart), so that they cannot drift apart.
func TestREADMECommandsAreWhatCIRuns(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(readme), "```", 3)
	if len(first) < 3 || !strings.HasPrefix(first[1], "sh\n") {
		t.Fatal("README.md does not open with a sh block")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimPrefix(first[1], "sh\n"), "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "go run ./examples/quickstart") || !strings.HasPrefix(cmds[1], "go test") {
		t.Fatalf("README.md's first block is %q, want the quickstart and the test command", cmds)
	}
	for _, cmd := range cmds {
		if !strings.Contains(string(ci), cmd+"\n") {
			t.Errorf(".ci/run does not run the README's %q", cmd)
		}
	}
}
