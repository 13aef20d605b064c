package payments_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// retiredNames are the second names docs/glossary.md retired: each concept
// has one name, and these must not come back in code, docs or test names.
// CHANGELOG.md names them (it says what replaced them), and so do the
// glossary and this test.
var retiredNames = map[string]*regexp.Regexp{
	"event store (the claim store)": regexp.MustCompile(`(?i)\bevent[ -]stores?\b`),
	"EventStore (the claim store)":  regexp.MustCompile(`EventStore`),
	"ReconcileThrough":              regexp.MustCompile(`ReconcileThrough|outcome\.Reconciler\b`),
	// The claim store's old names. Only the qualified ones: outcome.Store and
	// outcome.MemoryStore keep theirs, so a bare Store or MemoryStore cannot
	// be told apart by grep. The webhook package's own code is held by the
	// API snapshot (api/), where these names no longer exist.
	"webhook.Store (webhook.ClaimStore)":                          regexp.MustCompile(`\bwebhook\.(Store|MemoryStore|MemoryStoreOption|NewMemoryStore|WithStore|WithStoreTimeout|DefaultStoreTimeout)\b|\bDefaultMemoryStoreSize\b|\bMemoryStoreOption\b`),
	"pgstore.Store, redisstore.Store (ClaimStore)":                regexp.MustCompile(`\b(pgstore|redisstore)\.(Store|New)\b`),
	"TestMemoryStore… of package webhook (TestMemoryClaimStore…)": regexp.MustCompile(`\bTestMemoryStore(Claims|ReplayWindow|ReplayAfterManyEvents|Lease|LeasesIgnoreWallClockSteps)\b`),
}

// TestGlossaryRetiredNames greps every .go and .md file of the repository
// (every module) for the names the glossary retired.
func TestGlossaryRetiredNames(t *testing.T) {
	skip := map[string]bool{"CHANGELOG.md": true, filepath.Join("docs", "glossary.md"): true, "glossary_test.go": true}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "api") {
				return filepath.SkipDir
			}
			return nil
		}
		if skip[path] || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for name, re := range retiredNames {
				if re.MatchString(line) {
					t.Errorf("%s:%d uses the retired name %s (docs/glossary.md): %s", path, i+1, name, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk is broken", checked)
	}
}
