// Package compose_test checks docs/compose/compose.yaml against the
// programs it runs. CI has no Docker: these tests read the file, compare it
// with the programs' flags and environment variables, and run the three
// programs as the file configures them, as plain processes.
package compose_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const repoRoot = "../.."

// composeFile is the part of the Compose file format that the file uses.
type composeFile struct {
	Name string `yaml:"name"`
	// XSandbox holds the values that services share through YAML anchors.
	XSandbox map[string]any `yaml:"x-sandbox"`
	Services map[string]struct {
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Healthcheck struct {
			Test     []string `yaml:"test"`
			Interval string   `yaml:"interval"`
			Timeout  string   `yaml:"timeout"`
			Retries  int      `yaml:"retries"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true) // a misspelt key is an error, not a silently ignored one
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f
}

// programs maps the binary names the Dockerfile builds to their package
// directories, from its go build line.
func programs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(b)
	if !regexp.MustCompile(`(?m)^FROM golang:1\.24 AS build$`).MatchString(dockerfile) {
		t.Error("the Dockerfile does not build with golang:1.24")
	}
	m := regexp.MustCompile(`go build [^\n]*?-o /out/ \\\n\s+(.*)`).FindStringSubmatch(dockerfile)
	if m == nil {
		t.Fatal("the Dockerfile has no `go build ... -o /out/` line")
	}
	progs := map[string]string{}
	for _, pkg := range strings.Fields(m[1]) {
		dir := filepath.Join(repoRoot, filepath.FromSlash(pkg))
		if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
			t.Errorf("the Dockerfile builds %s, which has no main.go", pkg)
		}
		progs[path.Base(pkg)] = dir
	}
	return progs
}

func TestComposeServices(t *testing.T) {
	f := readCompose(t)
	progs := programs(t)
	want := map[string]string{"sandbox": "payments-sandbox", "receiver": "webhook-receiver", "app": "quickstart"}
	if len(f.Services) != len(want) {
		t.Errorf("services %v, want sandbox, receiver and app", slices.Sorted(maps.Keys(f.Services)))
	}
	for name, binary := range want {
		s, ok := f.Services[name]
		if !ok {
			t.Errorf("no service %s", name)
			continue
		}
		if s.Build.Context != repoRoot || s.Build.Dockerfile != "docs/compose/Dockerfile" {
			t.Errorf("%s: build %+v, want the repository root and docs/compose/Dockerfile", name, s.Build)
		}
		if len(s.Command) == 0 || s.Command[0] != binary {
			t.Errorf("%s: command %q, want %s", name, s.Command, binary)
		} else if _, ok := progs[binary]; !ok {
			t.Errorf("%s: the Dockerfile does not build %s", name, binary)
		}
		for dep, d := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("%s depends on an unknown service %s", name, dep)
			}
			if d.Condition == "service_healthy" && len(f.Services[dep].Healthcheck.Test) == 0 {
				t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}
	app := f.Services["app"]
	for _, dep := range []string{"sandbox", "receiver"} {
		if app.DependsOn[dep].Condition != "service_healthy" {
			t.Errorf("the app does not wait for the %s to be healthy", dep)
		}
	}

	// The services meet where the others look for them.
	sandbox, receiver := f.Services["sandbox"], f.Services["receiver"]
	if got := flagValue(sandbox.Command[1:], "addr"); got != "0.0.0.0:8765" {
		t.Errorf("the sandbox listens on %q, want 0.0.0.0:8765 (reachable from the other containers)", got)
	}
	if got := app.Environment["PAYMENTS_BASE_URL"]; got != "http://sandbox:8765" {
		t.Errorf("the app's PAYMENTS_BASE_URL is %q", got)
	}
	if app.Environment["PAYMENTS_INSECURE_PLAIN_HTTP"] != "1" {
		t.Error("the app needs PAYMENTS_INSECURE_PLAIN_HTTP=1 for plain http to the sandbox container")
	}
	if got := flagValue(sandbox.Command[1:], "webhook-url"); got != "http://receiver:8080/webhooks" {
		t.Errorf("the sandbox sends webhooks to %q", got)
	}
	if got := receiver.Environment["PAYMENTS_WEBHOOK_ADDR"]; got != ":8080" {
		t.Errorf("the receiver listens on %q, want :8080", got)
	}
	if key := flagValue(sandbox.Command[1:], "api-key"); key == "" || key != app.Environment["PAYMENTS_API_KEY"] {
		t.Errorf("the sandbox's -api-key %q is not the app's PAYMENTS_API_KEY %q", key, app.Environment["PAYMENTS_API_KEY"])
	}
	if secret := flagValue(sandbox.Command[1:], "webhook-secret"); secret == "" || secret != receiver.Environment["PAYMENTS_WEBHOOK_SECRET"] {
		t.Errorf("the sandbox's -webhook-secret %q is not the receiver's PAYMENTS_WEBHOOK_SECRET %q",
			secret, receiver.Environment["PAYMENTS_WEBHOOK_SECRET"])
	}
}

// Every flag the sandbox gets exists in its flag set, and every variable a
// program gets is one it (or the SDK's NewClientFromEnv, when it calls it)
// reads.
func TestComposeFlagsAndEnvironment(t *testing.T) {
	f := readCompose(t)
	progs := programs(t)

	sandbox := f.Services["sandbox"]
	flags := sandboxFlags(t)
	args := sandbox.Command[1:]
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		isBool, ok := flags[name]
		switch {
		case !strings.HasPrefix(args[i], "-"):
			t.Errorf("sandbox: %q is not a flag (payments-sandbox takes no arguments)", args[i])
		case !ok:
			t.Errorf("sandbox: payments-sandbox has no flag -%s", name)
		case !isBool && !hasValue:
			if i+1 == len(args) {
				t.Errorf("sandbox: -%s has no value", name)
			}
			i++ // its value
		}
	}

	sdkEnv := envReads(t, []string{filepath.Join(repoRoot, "client.go")}, "NewClientFromEnv")
	for name, s := range f.Services {
		if len(s.Command) == 0 || len(s.Environment) == 0 {
			continue
		}
		dir, ok := progs[s.Command[0]]
		if !ok {
			continue // reported by TestComposeServices
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
		read := envReads(t, files, "")
		if callsFunc(t, files, "payments", "NewClientFromEnv") {
			for v := range sdkEnv {
				read[v] = true
			}
		}
		for v := range s.Environment {
			if !read[v] {
				t.Errorf("%s: %s does not read %s (it reads %v)", name, s.Command[0], v, slices.Sorted(maps.Keys(read)))
			}
		}
	}
	for _, v := range []string{"PAYMENTS_API_KEY", "PAYMENTS_BASE_URL", "PAYMENTS_INSECURE_PLAIN_HTTP"} {
		if !sdkEnv[v] {
			t.Errorf("payments.NewClientFromEnv no longer reads %s", v)
		}
	}
}

// sandboxFlags returns the flags payments-sandbox defines, each with
// whether it is a boolean flag.
func sandboxFlags(t *testing.T) map[string]bool {
	t.Helper()
	file := filepath.Join(repoRoot, "cmd", "payments-sandbox", "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			name, err := strconv.Unquote(lit.Value)
			if err == nil {
				flags[name] = sel.Sel.Name == "Bool"
			}
		}
		return true
	})
	if len(flags) < 5 {
		t.Fatalf("found only the flags %v in %s: the scan is broken", flags, file)
	}
	return flags
}

// envReads returns the variables that os.Getenv or os.LookupEnv read in
// files, inside func only when it is not "".
func envReads(t *testing.T, files []string, only string) map[string]bool {
	t.Helper()
	vars := map[string]bool{}
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || (only != "" && fn.Name.Name != only) {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 1 || !isSelector(call.Fun, "os", "Getenv", "LookupEnv") {
					return true
				}
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						vars[v] = true
					}
				}
				return true
			})
		}
	}
	return vars
}

func callsFunc(t *testing.T, files []string, pkg, name string) bool {
	t.Helper()
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isSelector(call.Fun, pkg, name) {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

func isSelector(e ast.Expr, pkg string, names ...string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && slices.Contains(names, sel.Sel.Name)
}

// flagValue returns the value of -name in args ("-name value" or
// "-name=value"), or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		switch {
		case a == "-"+name || a == "--"+name:
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "-"+name+"="), strings.HasPrefix(a, "--"+name+"="):
			_, v, _ := strings.Cut(a, "=")
			return v
		}
	}
	return ""
}

// TestComposeProgramsMeet runs the three programs as compose.yaml configures
// them, as processes on this machine: the same commands, flags and
// environment, except the addresses, which name containers (sandbox,
// receiver) and fixed ports, and become free loopback ports here. The app
// must run its journey against the sandbox (not the in-process fake it
// falls back to without PAYMENTS_API_KEY), and the receiver must verify the
// webhooks the sandbox signs.
func TestComposeProgramsMeet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the Compose programs; skipped with -short")
	}
	if testing.Short() {
		t.Skip("builds and runs the sandbox, the receiver and the quickstart")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build the programs")
	}
	f := readCompose(t)
	progs := programs(t)
	bin := t.TempDir()
	build := exec.Command(goTool, "build", "-o", bin+string(filepath.Separator))
	for _, dir := range progs {
		build.Args = append(build.Args, "./"+filepath.ToSlash(strings.TrimPrefix(dir, repoRoot+string(filepath.Separator))))
	}
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}

	// The receiver, on a free port.
	receiver := f.Services["receiver"]
	recvOut := start(t, bin, receiver.Command, receiver.Environment, map[string]string{"PAYMENTS_WEBHOOK_ADDR": "127.0.0.1:0"})
	listening := recvOut.waitFor(t, regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`))

	// The sandbox, on a free port, sending webhooks to the receiver.
	sandbox := f.Services["sandbox"]
	cmd := slices.Clone(sandbox.Command)
	setFlag(t, cmd, "addr", "127.0.0.1:0")
	setFlag(t, cmd, "webhook-url", "http://"+listening[1]+"/webhooks")
	sbOut := start(t, bin, cmd, sandbox.Environment, nil)
	url := sbOut.waitFor(t, regexp.MustCompile(`URL: +(http://\S+)`))

	// The app, against the sandbox.
	app := f.Services["app"]
	appCmd := exec.Command(filepath.Join(bin, app.Command[0]), app.Command[1:]...)
	appCmd.Env = environ(app.Environment, map[string]string{"PAYMENTS_BASE_URL": url[1]})
	out, err := appCmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the app failed: %v\n%s", err, out)
	}
	for _, want := range []string{"Running against the service at " + url[1], "is completed (completed: true)", "Done."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the app's output lacks %q:\n%s", want, out)
		}
	}
	// The receiver verified the payment's webhook, signed with the secret
	// the sandbox got.
	recvOut.waitFor(t, regexp.MustCompile(`"msg":"payment event".*"status":"completed"`))
	if strings.Contains(recvOut.String(), "invalid signature") {
		t.Errorf("the receiver refused a signature:\n%s", recvOut.String())
	}
}

// start runs a program of the Dockerfile with the service's command and
// environment, the variables of override replacing theirs, and stops it when
// the test ends.
func start(t *testing.T, bin string, command []string, env, override map[string]string) *output {
	t.Helper()
	out := &output{exited: make(chan struct{})}
	cmd := exec.Command(filepath.Join(bin, command[0]), command[1:]...)
	cmd.Env = environ(env, override)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(out.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-out.exited
		if t.Failed() {
			t.Logf("%s:\n%s", command[0], out.String())
		}
	})
	return out
}

// environ is the environment of a program in its container: the service's
// variables (with override), PATH and HOME, and nothing else from the test's
// environment (PAYMENTS_API_KEY set there must not leak in).
func environ(env, override map[string]string) []string {
	vars := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	for k, v := range env {
		if o, ok := override[k]; ok {
			v = o
		}
		vars = append(vars, k+"="+v)
	}
	return vars
}

func setFlag(t *testing.T, args []string, name, value string) {
	t.Helper()
	for i, a := range args {
		if a == "-"+name && i+1 < len(args) {
			args[i+1] = value
			return
		}
	}
	t.Fatalf("no -%s in %q", name, args)
}

// output collects a process's output while the test reads it.
type output struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	exited chan struct{} // closed when the process has ended
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits up to 20 seconds, or until the process ends, for a line
// matching re, and returns its submatches.
func (o *output) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		var exited bool
		select {
		case <-o.exited: // all its output is in: read it once more
			exited = true
		default:
		}
		sc := bufio.NewScanner(strings.NewReader(o.String()))
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				return m
			}
		}
		if exited {
			t.Fatalf("the process ended without a line matching %s", re)
		}
		select {
		case <-timeout:
			t.Fatalf("no line matching %s after 20s", re)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
