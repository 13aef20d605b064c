package outcome_test

import (
	"flag"
	"os"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// The guide docs/outcomes.md shows code copied from tested examples, marked
// the way the README marks its blocks (see internal/readmecheck). After
// changing a source, copy it into the guide with
//
//	go test -run TestOutcomesGuideGoBlocks -update-guide ./outcome

const guidePath = "../docs/outcomes.md"

var updateGuide = flag.Bool("update-guide", false, "rewrite the Go blocks of docs/outcomes.md from their sources, then check them")

func TestOutcomesGuideGoBlocks(t *testing.T) {
	md, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	checker := readmecheck.Checker{Root: ".."}
	if *updateGuide {
		updated, err := checker.Rewrite(string(md))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(guidePath, []byte(updated), 0o644); err != nil {
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
	if goBlocks != 4 {
		t.Fatalf("found %d Go blocks in the guide, want 4: the parser or the guide changed", goBlocks)
	}
	for _, p := range checker.Check(string(md)) {
		t.Error(p)
	}
}
