package releasetest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// merchantProgram uses every library module as a merchant's program would:
// the client (instrumented by paymentsotel) on the fake of paymentstest, and
// the webhook handler on pgstore and on the default memory store, with a
// redisstore built beside them. The pgx pool and the Redis client connect
// lazily, to a port where nothing listens, so no server is needed: the
// delivery to the pgstore handler proves that the store's code runs (it
// fails to reach the database, and the handler answers 503).
const merchantProgram = `package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func main() {
	ctx := context.Background()
	srv := paymentstest.NewServer()
	defer srv.Close()
	inst, err := paymentsotel.New()
	check(err)
	client, err := payments.NewClient(srv.APIKey(), append(inst.ClientOptions(), payments.WithBaseURL(srv.URL()))...)
	check(err)
	limit := payments.Amount{Decimal: decimal.RequireFromString("250000")}
	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
		AmountLimit:     &limit,
	})
	check(err)
	fmt.Println("recipient created:", recipient.ID != "")

	pool, err := pgxpool.New(ctx, "postgres://merchant@127.0.0.1:1/shop?connect_timeout=5")
	check(err)
	defer pool.Close()
	pg, err := pgstore.NewClaimStore(pool)
	check(err)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	_, err = redisstore.NewClaimStore(rdb)
	check(err)

	const secret = "merchant-endpoint-secret"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	check(err)
	processed := 0
	process := func(ctx context.Context, ev *payments.Event) error {
		processed++
		return nil
	}
	body := []byte(` + "`" + `{"id":"evt_1","event":"payment.completed","created_at":"2026-11-25T00:00:00Z","data":{"reference":"order-1"}}` + "`" + `)
	deliver := func(h http.Handler) int {
		req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(string(body)))
		req.Header.Set("Payments-Signature", webhook.SignPayload(body, time.Now(), secret))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	fmt.Println("pgstore handler:", deliver(webhook.NewHandler(verifier, process, webhook.WithClaimStore(pg), inst.HandlerOption())), "processed", processed)
	fmt.Println("memory handler:", deliver(webhook.NewHandler(verifier, process, inst.HandlerOption())), "processed", processed)
}
`

// merchantOutput is what merchantProgram prints.
const merchantOutput = "recipient created: true\npgstore handler: 503 processed 0\nmemory handler: 200 processed 1\n"

// rootOnlyProgram uses only the root module's packages.
const rootOnlyProgram = `package main

import (
	"fmt"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	srv := paymentstest.NewServer()
	defer srv.Close()
	_, err := payments.NewClient(srv.APIKey(), payments.WithBaseURL(srv.URL()))
	fmt.Println(err == nil, webhook.NewHandler != nil)
}
`

// designLibraries are the module paths that a program of the root module's
// packages may build, besides the standard library: the design's libraries
// (go-cleanhttp comes with go-retryablehttp).
var designLibraries = []string{
	rootPath + "/",
	"github.com/google/uuid/",
	"github.com/hashicorp/go-retryablehttp/",
	"github.com/hashicorp/go-cleanhttp/",
	"github.com/shopspring/decimal/",
	"golang.org/x/time/",
}

// heavyModules are the dependencies of the satellite modules, which a
// consumer of the root module must not find in its module graph.
var heavyModules = []string{"github.com/jackc/", "github.com/redis/", "go.opentelemetry.io/"}

// installCommands returns the "go get" lines of the sh blocks in the
// README's Install section, as written.
func installCommands(t *testing.T, readme string) [][]string {
	t.Helper()
	start := strings.Index(readme, "\n## Install\n")
	if start < 0 {
		t.Fatal("README.md has no \"## Install\" section")
	}
	section := readme[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	return shCommands(section, "go get ")
}

// shCommands returns the lines of text's sh blocks that start with prefix,
// each split into words, without a trailing comment.
func shCommands(text, prefix string) [][]string {
	var cmds [][]string
	inSh := false
	for _, line := range strings.Split(text, "\n") {
		switch t := strings.TrimSpace(line); {
		case strings.HasPrefix(t, "```"):
			inSh = !inSh && t == "```sh"
		case inSh && strings.HasPrefix(t, prefix):
			cmd, _, _ := strings.Cut(t, "#")
			cmds = append(cmds, strings.Fields(cmd))
		}
	}
	return cmds
}

// newModule makes an empty merchant module outside the repository and
// returns its directory.
func newModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/merchant\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeMain writes a program's main.go into dir.
func writeMain(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkInstall runs the README's Install commands in a new module outside
// the repository through proxy, then builds and runs merchantProgram.
func checkInstall(t *testing.T, readme, proxy, modcache, version string) {
	t.Helper()
	cmds := installCommands(t, readme)
	var got []string
	for _, cmd := range cmds {
		if len(cmd) < 3 {
			t.Fatalf("README install command %q names no module", strings.Join(cmd, " "))
		}
		p, _, _ := strings.Cut(cmd[len(cmd)-1], "@")
		got = append(got, p)
	}
	var want []string
	for _, dir := range libraries {
		want = append(want, modulePath(dir))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("README's Install commands get %q, want one for each library module %q", got, want)
	}

	dir := newModule(t)
	env := outsideEnv(t, proxy, modcache)
	for _, cmd := range cmds {
		run(t, dir, env, cmd[0], cmd[1:]...)
	}
	mods := run(t, dir, env, "go", append([]string{"list", "-m"}, want...)...)
	for _, p := range want {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p) + ` ` + regexp.QuoteMeta(version) + `$`).MatchString(mods) {
			t.Errorf("after the README's commands the module has not %s %s:\n%s", p, version, mods)
		}
	}
	checkServedFromProxy(t, "the merchant's go.sum", readFile(t, dir, "go.sum"), proxy, version, libraries)
	writeMain(t, dir, merchantProgram)
	if out := run(t, dir, env, "go", "run", "."); out != merchantOutput {
		t.Errorf("the merchant's program printed\n%s\nwant\n%s", out, merchantOutput)
	}
}

// checkRootOnly installs the root module alone, as the README's first Install
// command does, and checks that the module graph holds none of the
// satellites' heavy dependencies and the build only the design's libraries.
func checkRootOnly(t *testing.T, readme, proxy, modcache, version string) {
	t.Helper()
	first := installCommands(t, readme)[0]
	dir := newModule(t)
	env := outsideEnv(t, proxy, modcache)
	run(t, dir, env, first[0], first[1:]...)
	checkServedFromProxy(t, "the merchant's go.sum", readFile(t, dir, "go.sum"), proxy, version, []string{""})
	writeMain(t, dir, rootOnlyProgram)
	if out := run(t, dir, env, "go", "run", "."); out != "true true\n" {
		t.Errorf("the root-only program printed %q", out)
	}
	graph := run(t, dir, env, "go", "mod", "graph")
	if !strings.Contains(graph, "github.com/shopspring/decimal@") {
		t.Fatalf("go mod graph printed too little to be right:\n%s", graph)
	}
	for _, line := range strings.Split(strings.TrimSpace(graph), "\n") {
		for _, heavy := range heavyModules {
			if _, to, _ := strings.Cut(line, " "); strings.HasPrefix(to, heavy) {
				t.Errorf("a consumer of the root module has %q in its module graph", line)
			}
		}
	}
	deps := run(t, dir, env, "go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	for _, dep := range strings.Fields(deps) {
		if dep == "example.com/merchant" {
			continue
		}
		if !slices.ContainsFunc(designLibraries, func(lib string) bool { return strings.HasPrefix(dep+"/", lib) }) {
			t.Errorf("a program of the root module's packages builds %s, not one of the design's libraries", dep)
		}
	}
}

// checkEachAlone runs each Install command of a satellite in a module of its
// own, as a merchant who needs only that store or only tracing does, and
// builds the module's package: there no requirement of the merchant's hides
// the version at which the satellite requires the root.
func checkEachAlone(t *testing.T, readme, proxy, modcache, version string) {
	t.Helper()
	for _, cmd := range installCommands(t, readme)[1:] {
		dir := newModule(t)
		env := outsideEnv(t, proxy, modcache)
		run(t, dir, env, cmd[0], cmd[1:]...)
		p, _, _ := strings.Cut(cmd[len(cmd)-1], "@")
		run(t, dir, env, "go", "build", p)
		checkServedFromProxy(t, "go.sum after "+strings.Join(cmd, " "), readFile(t, dir, "go.sum"), proxy, version, []string{"", strings.TrimPrefix(p, rootPath+"/")})
		if out := run(t, dir, env, "go", "list", "-m", rootPath); out != rootPath+" "+version+"\n" {
			t.Errorf("after %q the root module is %q, want %s", strings.Join(cmd, " "), out, version)
		}
	}
}

// checkCommandInstall runs docs/cli.md's "go install" line for the payments
// command as written, outside any module, and runs the program it installs:
// it is built from the proxy's modules at version (its own, the root's and
// the stores'), prints its help, and reads a PostgreSQL store through pgx
// (nothing listens there: pgx's own error says it tried).
func checkCommandInstall(t *testing.T, cliDoc, proxy, modcache, version string) {
	t.Helper()
	cmds := shCommands(cliDoc, "go install ")
	if len(cmds) != 1 || len(cmds[0]) != 3 {
		t.Fatalf("docs/cli.md has %d go install lines (%q), want one: go install PATH@VERSION", len(cmds), cmds)
	}
	cmd := cmds[0]
	if p, _, _ := strings.Cut(cmd[2], "@"); p != modulePath("cmd/payments") {
		t.Fatalf("docs/cli.md installs %s, want %s", p, modulePath("cmd/payments"))
	}
	dir, bin := t.TempDir(), t.TempDir()
	env := append(outsideEnv(t, proxy, modcache), "GOBIN="+bin)
	run(t, dir, env, cmd[0], cmd[1:]...)
	exe := filepath.Join(bin, "payments")
	info := run(t, dir, env, "go", "version", "-m", exe)
	builtFrom := []string{"cmd/payments", "", "eventstore/pgstore", "eventstore/redisstore"}
	checkServedFromProxy(t, "go version -m of the installed command", info, proxy, version, builtFrom)
	for _, d := range builtFrom {
		re := regexp.MustCompile(`(?m)^\s+(mod|dep)\s+` + regexp.QuoteMeta(modulePath(d)) + `\s+` + regexp.QuoteMeta(version) + `\s`)
		if !re.MatchString(info) {
			t.Errorf("the installed payments command is not built from %s %s:\n%s", modulePath(d), version, info)
		}
	}
	if !strings.Contains(info, "github.com/jackc/pgx/v5") || !strings.Contains(info, "github.com/redis/go-redis/v9") {
		t.Errorf("the installed payments command is built without pgx and go-redis:\n%s", info)
	}
	if out := run(t, dir, env, exe, "payments", "stuck", "--help"); !strings.Contains(out, "payments payments stuck [--older-than 1h]") {
		t.Errorf("payments payments stuck --help printed\n%s", out)
	}
	out, err := tryRun(dir, env, exe, "payments", "stuck", "--timeout", "10s", "--store", "postgres://merchant:pw@127.0.0.1:1/shop?sslmode=disable")
	if err == nil || !strings.Contains(out, "failed to connect to") {
		t.Errorf("payments payments stuck on a closed port: err %v, output\n%s", err, out)
	}
}

// TestModulesInstallFromAProxy serves every published module of this
// checkout from a file-system module proxy at the release version that the
// modules require of each other, and installs them as a merchant would:
// the README's own Install commands in a module outside the repository, with
// no go.work and no replace. A satellite that requires the root at a version
// the proxy does not have (the pseudo-version v0.0.0-00010101000000-...
// that a replace to the checkout hides) fails here.
func TestModulesInstallFromAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module proxy and modules outside the checkout; skipped with -short")
	}
	t.Parallel()
	root := repoRoot(t)
	version := requiredRelease(t, root)
	readme := readFile(t, root, "README.md")
	proxy := buildProxy(t, source{root: root}, version)
	// One module cache for the merchants' modules of this proxy: each
	// module is extracted and compiled once.
	modcache := filepath.Join(t.TempDir(), "modcache")
	t.Run("every module", func(t *testing.T) { checkInstall(t, readme, proxy, modcache, version) })
	t.Run("each alone", func(t *testing.T) { checkEachAlone(t, readme, proxy, modcache, version) })
	t.Run("root only", func(t *testing.T) { checkRootOnly(t, readme, proxy, modcache, version) })
	t.Run("the command", func(t *testing.T) { checkCommandInstall(t, readFile(t, root, "docs/cli.md"), proxy, modcache, version) })
}

// readFile returns the file name (slash-separated) under dir.
func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
