package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const rootPath = "github.com/paymentsapi/payments-go"

// maxWithFuncs is issue 35's ceiling on With… functions across the public
// packages.
const maxWithFuncs = 40

// withBudget is each public package's ceiling of With… functions; issue 35
// wants at most maxWithFuncs across all of them, which the test enforces
// too. A package that is not listed may have none.
var withBudget = map[string]int{
	rootPath:                            13, // WithRetries(RetryPolicy) holds the attempts, the waits and the attempt timeout
	rootPath + "/paymentstest":          5,  // one WithWebhook, one WithSandbox: the rest are fields
	rootPath + "/webhook":               6,  // the recently-done memory, the store timeout and the replay window follow defaults
	rootPath + "/outcome":               3,  // the poll interval follows its default
	rootPath + "/eventstore/pgstore":    6,  // one Option for the claim store and the outcome store
	rootPath + "/eventstore/redisstore": 4,  // one Option for the claim store and the outcome store
	rootPath + "/paymentsotel":          3,
}

// TestWithFunctionsWithinBudget counts the With… functions of every public
// package in the api/ snapshot against withBudget, and refuses any exported
// …Clock option: a test seam belongs in export_test.go or internal/testhook.
func TestWithFunctionsWithinBudget(t *testing.T) {
	got, err := withFuncs(filepath.Join("..", "..", "api"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 5 {
		t.Fatalf("read %d snapshot files from api/; the count needs all of them", len(got))
	}
	total := 0
	pkgs := make([]string, 0, len(got))
	for pkg := range got {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		names := got[pkg]
		total += len(names)
		if len(names) > withBudget[pkg] {
			t.Errorf("%s has %d With… functions, over its budget of %d: %s", pkg, len(names), withBudget[pkg], strings.Join(names, ", "))
		}
		for _, n := range names {
			if strings.HasSuffix(n, "Clock") {
				t.Errorf("%s.%s is an exported clock option: make it a test hook (export_test.go, internal/testhook)", pkg, n)
			}
		}
		if len(names) > 0 {
			t.Logf("%-50s %2d %s", pkg, len(names), strings.Join(names, " "))
		}
	}
	budget := 0
	for _, b := range withBudget {
		budget += b
	}
	t.Logf("%d With… functions across the public packages (budgets sum to %d)", total, budget)
	if total > maxWithFuncs {
		t.Errorf("%d With… functions across the public packages, over issue 35's %d: make a default serve or merge near-duplicates", total, maxWithFuncs)
	}
	if budget > maxWithFuncs {
		t.Errorf("the budgets sum to %d, over issue 35's %d", budget, maxWithFuncs)
	}
}

// TestWithFuncsReadsSnapshot: the counter finds With… functions and their
// package in a snapshot file, and nothing else.
func TestWithFuncsReadsSnapshot(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.txt"), `// Exported API
package x // import "example.com/x"

func New(...Option) *T
func WithA(int) Option
func WithClock(func() time.Time) Option
method (*T) WithB() *T
type Option func(*T)
`)
	got, err := withFuncs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"WithA", "WithClock"}; !slices.Equal(got["example.com/x"], want) {
		t.Fatalf("withFuncs = %v, want example.com/x: %v", got, want)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
