package payments_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// Every ```go block of README.md is a copy of code that the tests compile
// and run, named by a marker on the line before it (see internal/readmecheck).
// After changing a source, copy it into the README with
//
//	go test -run TestREADMEGoBlocks -update-readme .

const readmePath = "README.md"

var updateREADME = flag.Bool("update-readme", false,
	"rewrite the README's Go blocks that have a source marker from their sources, then check them")

// TestREADMEGoBlocks holds every Go block of the README to its source. With
// -update-readme it first rewrites them from their sources.
func TestREADMEGoBlocks(t *testing.T) {
	md, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateREADME {
		updated, err := readmecheck.Checker{Root: "."}.Rewrite(string(md))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readmePath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		md = []byte(updated)
	}
	blocks, err := readmecheck.Blocks(string(md))
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
	for _, p := range (readmecheck.Checker{Root: "."}).Check(string(md)) {
		t.Error(p)
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
