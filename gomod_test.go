package payments_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goCmd runs the go command in dir with env added, and returns its output.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// heavyModules are the dependencies of the optional modules, which a program
// that imports only the client, the fake and the receiver must not meet.
var heavyModules = []string{"github.com/jackc/", "github.com/redis/", "go.opentelemetry.io/", "go.yaml.in/yaml", "gopkg.in/yaml"}

// A merchant's module that imports payments, paymentstest and webhook finds
// none of pgx, go-redis, OpenTelemetry or yaml in what it builds, and none
// but yaml in its module graph, where yaml is only the requirement of
// testify, our test library (stripe-go's module graph has it for the same
// reason): go mod tidy in such a module never moves the merchant's own
// versions of the heavy modules.
func TestMerchantModuleGraphHasNoOptionalDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a scratch module; skipped with -short")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/merchant\n\ngo 1.24\n\nrequire github.com/paymentsapi/payments-go v0.0.0-00010101000000-000000000000\n\nreplace github.com/paymentsapi/payments-go => "+root+"\n")
	write("main.go", `package main

import (
	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	_ = webhook.NewHandler
	_ = payments.Version
}
`)
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	goCmd(t, dir, env, "mod", "tidy")

	graph := goCmd(t, dir, env, "mod", "graph")
	for _, line := range strings.Split(strings.TrimSpace(graph), "\n") {
		from, to, _ := strings.Cut(line, " ")
		for _, heavy := range heavyModules {
			if !strings.HasPrefix(to, heavy) {
				continue
			}
			if strings.Contains(heavy, "yaml") && (strings.HasPrefix(from, "github.com/stretchr/testify@") || strings.HasPrefix(from, "github.com/paymentsapi/payments-go@")) {
				continue // testify's requirement, listed by our go.mod as indirect
			}
			t.Errorf("the merchant's module graph has %s (required by %s)", to, from)
		}
	}
	if !strings.Contains(graph, "github.com/shopspring/decimal@") {
		t.Fatalf("go mod graph printed too little to be right:\n%s", graph)
	}

	deps := goCmd(t, dir, env, "list", "-deps", ".")
	for _, dep := range strings.Fields(deps) {
		for _, heavy := range heavyModules {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("the merchant's program builds %s", dep)
			}
		}
	}
}

// goAbove124 are the modules that need a newer Go than 1.24, with the Go
// they say and why. The root module, which every merchant imports, is not
// among them.
var goAbove124 = map[string]string{
	// River v0.45 and later (the project is on v0.51.2) say go 1.26.0;
	// the command and the example receiver import pgstore.
	"eventstore/pgstore/go.mod":        "1.26.0",
	"cmd/payments/go.mod":              "1.26.0",
	"examples/webhook-receiver/go.mod": "1.26.0",
	"examples/pg-queue/go.mod":         "1.26.0",
	"examples/payouts-river/go.mod":    "1.26.0",
	// kin-openapi, the OpenAPI 3.1 validator of the contract, needs Go 1.25
	// from the version that validates 3.1 documents (v0.137.0) on.
	"openapi/go.mod": "1.25",
}

// Every module of the repository asks its users for Go 1.24, the oldest Go
// the SDK supports (except those of goAbove124, for their dependencies), and
// none pins a toolchain.
func TestEveryModuleSaysGo124(t *testing.T) {
	mods, err := filepath.Glob("*/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	deeper, _ := filepath.Glob("*/*/go.mod")
	mods = append(append([]string{"go.mod"}, mods...), deeper...)
	if len(mods) < 7 {
		t.Fatalf("found only %v", mods)
	}
	for _, m := range mods {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		want := "1.24"
		if v, ok := goAbove124[filepath.ToSlash(m)]; ok {
			want = v
		}
		if g := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b); g == nil || string(g[1]) != want {
			t.Errorf("%s: the go directive is %q, want %s", m, g, want)
		}
		if regexp.MustCompile(`(?m)^toolchain `).Match(b) {
			t.Errorf("%s has a toolchain line", m)
		}
	}
}
