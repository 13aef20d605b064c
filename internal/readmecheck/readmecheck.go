// Package readmecheck holds the Markdown files of the repository to the code
// they show, for the README tests of every module: one parser of fenced
// blocks and sections, and one checker of source markers.
//
// Every ```go block of a checked file is a copy of code that the tests
// compile and run. The last non-blank line before a block names its source:
//
//	<!-- source: FILE NAME -->           the body of func NAME in FILE
//	<!-- source: FILE func:NAME -->      the whole declaration of func NAME, doc comment included
//	<!-- source: FILE region:NAME -->    the lines between "// region NAME" and "// endregion"
//	<!-- source: FILE file: -->          the whole file (a program whose own tests run it)
//	<!-- tested-by: DIR TestName -->     a block that TestName in the package at DIR checks itself
//
// A source marker may name several parts of one file; the block is then
// those parts in order, separated by a blank line. FILE and DIR are relative
// to the repository root. A body must be an Example with an "// Output:"
// comment (so that go test runs it and checks what it prints) or a Test; a
// whole function must be used by such an Example or Test of its file.
//
// BrokenLinks checks the relative links of a Markdown file: each must name a
// file or directory of the repository, and an anchor a heading of its file.
package readmecheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Checker checks the Go blocks of a Markdown file against the repository at
// Root.
type Checker struct {
	compileOnlyOK bool // the block's test runs its source: an Example need not
	// Root is the repository's root, as a path from the test's directory
	// ("." at the root, "../.." two levels down).
	Root string
	// File is the checked file's path from the root, for the messages
	// ("README.md" when empty).
	File string
	// ReadFile, when set, reads a source file by its path from the root
	// instead of the file system (for the checker's own tests).
	ReadFile func(path string) ([]byte, error)
}

// name returns the checked file's name for messages.
func (c Checker) name() string {
	if c.File == "" {
		return "README.md"
	}
	return c.File
}

// read reads a file of the repository by its path from the root.
func (c Checker) read(path string) ([]byte, error) {
	if filepath.IsAbs(path) || strings.Contains(path, "..") {
		return nil, fmt.Errorf("%s: name a file inside the repository", path)
	}
	if c.ReadFile != nil {
		return c.ReadFile(path)
	}
	return os.ReadFile(filepath.Join(c.Root, path))
}

var (
	markerRE = regexp.MustCompile(`^<!-- (source|tested-by): (.*?) -->$`)
	fenceRE  = regexp.MustCompile("^\\s*```([a-z]*)\\s*$")
)

// Block is one fenced code block of the README.
type Block struct {
	Line    int    // of the opening fence, counting from 1
	Lang    string // "go", "sh", ...
	Heading string // the section it is in
	// Marker is the source marker before the block when it has one, else
	// its tested-by marker, else "".
	Marker string
	// TestedBy is the tested-by marker before the block, or "": a block
	// may have both, a source that a test of another package runs.
	TestedBy string
	Code     string // the lines between the fences, each ending in "\n"
}

// Blocks returns the fenced blocks of a Markdown text, with the markers
// that precede each (the marker lines just before its fence, blank lines
// aside).
func Blocks(md string) ([]Block, error) {
	var (
		blocks  []Block
		cur     *Block
		heading string
		markers []string // the marker lines since the last other line
	)
	for i, line := range strings.Split(md, "\n") {
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				blocks = append(blocks, *cur)
				cur, markers = nil, nil
				continue
			}
			cur.Code += line + "\n"
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			cur = &Block{Line: i + 1, Lang: m[1], Heading: heading}
			for _, mk := range markers {
				if markerRE.FindStringSubmatch(mk)[1] == "tested-by" {
					cur.TestedBy = mk
				} else {
					cur.Marker = mk
				}
			}
			if cur.Marker == "" {
				cur.Marker = cur.TestedBy
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			heading = line
		}
		switch t := strings.TrimSpace(line); {
		case markerRE.MatchString(t):
			markers = append(markers, t)
		case t != "":
			markers = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the block never closes", cur.Line)
	}
	return blocks, nil
}

// Check returns a problem for every Go block of md (the text of c.File)
// that has no marker,
// whose marker names nothing, or that differs from its source.
func (c Checker) Check(md string) []string {
	blocks, err := Blocks(md)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, b := range blocks {
		if b.Lang != "go" {
			continue
		}
		where := fmt.Sprintf("%s:%d (%s)", c.name(), b.Line, b.Heading)
		if err := c.checkBlock(b); err != nil {
			problems = append(problems, where+": "+err.Error())
		}
	}
	return problems
}

func (c Checker) checkBlock(b Block) error {
	if b.TestedBy != "" && b.TestedBy != b.Marker {
		// A source and a test elsewhere that runs it: both must hold, and
		// the source may be an Example that only compiles.
		if err := c.checkBlock(Block{Marker: b.TestedBy, TestedBy: b.TestedBy}); err != nil {
			return err
		}
		c.compileOnlyOK = true
	}
	m := markerRE.FindStringSubmatch(b.Marker)
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
		return c.findTest(fields[0], fields[1])
	}
	want, err := c.extractSource(fields[0], fields[1:])
	if err != nil {
		return err
	}
	if d := firstDifference(Dedent(b.Code), want); d != "" {
		return fmt.Errorf("the block differs from %s %s: %s", fields[0], strings.Join(fields[1:], " "), d)
	}
	return nil
}

// findTest checks that the package at dir has a test function name.
func (c Checker) findTest(dir, name string) error {
	files, err := filepath.Glob(filepath.Join(c.Root, dir, "*_test.go"))
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

// Dedent drops blank lines at both ends, trailing spaces, and the
// indentation that every non-blank line shares.
func Dedent(s string) string {
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

// Rewrite replaces each Go block that has a source marker with its
// source.
func (c Checker) Rewrite(md string) (string, error) {
	blocks, err := Blocks(md)
	if err != nil {
		return "", err
	}
	lines := strings.Split(md, "\n")
	// From the last block up, so that the line numbers of the others hold.
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		m := markerRE.FindStringSubmatch(b.Marker)
		if b.Lang != "go" || m == nil || m[1] != "source" {
			continue
		}
		fields := strings.Fields(m[2])
		if len(fields) < 2 {
			return "", fmt.Errorf("%s:%d: marker %q names no source", c.name(), b.Line, b.Marker)
		}
		rc := c
		rc.compileOnlyOK = b.TestedBy != ""
		src, err := rc.extractSource(fields[0], fields[1:])
		if err != nil {
			return "", fmt.Errorf("%s:%d: %w", c.name(), b.Line, err)
		}
		n := strings.Count(b.Code, "\n") // lines between the fences
		code := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
		lines = append(lines[:b.Line], append(code, lines[b.Line+n:]...)...)
	}
	return strings.Join(lines, "\n"), nil
}

// Section returns the part of md under the heading line (for example
// "## Running several replicas"), up to the next heading of the same or a
// higher level, and whether there is such a heading.
func Section(md, heading string) (string, bool) {
	var rest string
	switch i := strings.Index(md, "\n"+heading+"\n"); {
	case strings.HasPrefix(md, heading+"\n"):
		rest = md[len(heading)+1:]
	case i >= 0:
		rest = md[i+len(heading)+2:]
	default:
		return "", false
	}
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	inFence := false
	off := 0
	for _, line := range strings.SplitAfter(rest, "\n") {
		if fenceRE.MatchString(strings.TrimRight(line, "\n")) {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			if l <= level {
				return rest[:off], true
			}
		}
		off += len(line)
	}
	return rest, true
}

// Code returns the contents of the fenced blocks of lang in md, in order.
func Code(md, lang string) []string {
	blocks, err := Blocks(md)
	if err != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		if b.Lang == lang {
			out = append(out, b.Code)
		}
	}
	return out
}
