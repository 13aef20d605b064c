package payments_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// Every ```go block of README.md and of the guides in docs/ is a copy of code
// that the tests compile and run, named by a marker on the line before it
// (see internal/readmecheck). After changing a source, copy it into the
// Markdown files with
//
//	go test -run TestREADMEGoBlocks -update-readme .

var updateREADME = flag.Bool("update-readme", false,
	"rewrite the Go blocks of README.md and docs/*.md that have a source marker from their sources, then check them")

// checkedMarkdown returns README.md and the guides in docs/, the files whose
// Go blocks are checked.
func checkedMarkdown(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) < 9 {
		t.Fatalf("found only %v in docs/", guides)
	}
	return append([]string{"README.md"}, guides...)
}

// TestREADMEGoBlocks holds every Go block of README.md and docs/*.md to its
// source. With -update-readme it first rewrites them from their sources.
func TestREADMEGoBlocks(t *testing.T) {
	var goBlocks int
	for _, name := range checkedMarkdown(t) {
		md, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checker := readmecheck.Checker{Root: ".", File: name}
		if *updateREADME {
			updated, err := checker.Rewrite(string(md))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			md = []byte(updated)
		}
		blocks, err := readmecheck.Blocks(string(md))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, b := range blocks {
			if b.Lang == "go" {
				goBlocks++
			}
		}
		for _, p := range checker.Check(string(md)) {
			t.Error(p)
		}
	}
	if goBlocks < 15 {
		t.Fatalf("found %d Go blocks in README.md and docs/: the block parser is broken", goBlocks)
	}
}

// TestREADMELinks fails on a relative link of README.md, the guides or the
// other Markdown files at the root that names no file of the repository, or
// an anchor that no heading of its file has.
func TestREADMELinks(t *testing.T) {
	files := checkedMarkdown(t)
	top, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range top {
		if name != "README.md" {
			files = append(files, name)
		}
	}
	var links int
	for _, name := range files {
		md, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		links += len(readmecheck.Links(string(md)))
		for _, p := range (readmecheck.Checker{Root: "."}).BrokenLinks(name, string(md)) {
			t.Error(p)
		}
	}
	if links < 40 {
		t.Fatalf("found %d links: the link parser is broken", links)
	}
}

// The README is a path in: short, with a contents list that links to every
// guide in docs/.
func TestREADMEIsShortAndLinksEveryGuide(t *testing.T) {
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "\n"); n > 400 {
		t.Errorf("README.md has %d lines: move detail into a guide in docs/ (at most 400)", n)
	}
	contents, ok := readmecheck.Section(string(md), "## Contents")
	if !ok {
		t.Fatal("README.md has no \"## Contents\"")
	}
	for _, guide := range checkedMarkdown(t)[1:] {
		if !strings.Contains(contents, "]("+guide+")") {
			t.Errorf("README.md's contents list does not link to %s", guide)
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
