package eventstore_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The payments package never imports a database driver: a merchant who
// does not use these stores does not build them.
func TestRootPackageImportsNoDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/paymentsapi/payments-go").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed too little to be right: %q", out)
	}
	for _, d := range deps {
		for _, banned := range []string{"github.com/jackc/", "github.com/redis/", "/eventstore"} {
			if strings.Contains(d, banned) {
				t.Errorf("the payments package depends on %s", d)
			}
		}
	}
}

// Adding the stores' drivers did not raise the Go version the module asks
// of its users (DESIGN.md: go 1.24).
func TestGoDirectiveStays124(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil || string(m[1]) != "1.24" {
		t.Errorf("go.mod's go directive is %q, want 1.24", m)
	}
	if regexp.MustCompile(`(?m)^toolchain `).Match(mod) {
		t.Error("go.mod has a toolchain line")
	}
}
