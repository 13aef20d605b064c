//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// process is a program this test started.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *testlog.Buffer
	exited         chan struct{}
}

// startProcess runs bin until the test ends (SIGINT, then SIGKILL after
// 20 s), with env as its whole environment.
func startProcess(t *testing.T, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), stdout: new(testlog.Buffer), stderr: new(testlog.Buffer), exited: make(chan struct{})}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitFor waits until stdout matches re and returns the matches; it fails
// if the process exits first, or after a minute.
func (p *process) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
			return m
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before printing %s:\n%s\n%s", filepath.Base(p.cmd.Path), re, p.stdout, p.stderr)
		case <-deadline:
			t.Fatalf("%s did not print %s:\n%s\n%s", filepath.Base(p.cmd.Path), re, p.stdout, p.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// build builds a main package of this module into dir.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	require.NoError(t, err, "go build %s:\n%s", pkg, out)
	return bin
}

// baseEnv is this process's environment without the PAYMENTS_ variables
// and proxy settings, which would change what the programs do.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PAYMENTS_") && !strings.HasSuffix(strings.ToLower(name), "_proxy") {
			env = append(env, kv)
		}
	}
	return env
}

// TestListenEndToEnd runs the programs a developer runs: the sandbox, then
// "payments listen --forward-to" a local receiver, and "payments trigger".
// The receiver is webhook.NewHandler in this test, given the secret listen
// printed, so that the test sees each verified event its function gets and
// can answer 500 at will; examples/webhook-receiver meeting the sandbox is
// tested in cmd/payments-sandbox.
func TestListenEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sandbox and the CLI; skipped with -short")
	}
	if testing.Short() {
		t.Skip("builds and runs the sandbox and the command")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go")
	}
	dir := t.TempDir()
	sandboxBin := build(t, dir, "github.com/paymentsapi/payments-go/cmd/payments-sandbox")
	cliBin := build(t, dir, "github.com/paymentsapi/payments-go/cmd/payments")

	// The sandbox delivers its own copies to the URL "in the dashboard",
	// which here only answers 200.
	dashboard := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(dashboard.Close)
	sandbox := startProcess(t, baseEnv(), sandboxBin, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", dashboard.URL)
	sandbox.waitFor(t, regexp.MustCompile(`Press Ctrl\+C`))
	baseURL := sandbox.waitFor(t, regexp.MustCompile(`(?m)^export PAYMENTS_BASE_URL=(\S+)$`))[1]
	apiKey := sandbox.waitFor(t, regexp.MustCompile(`(?m)^export PAYMENTS_API_KEY=(\S+)$`))[1]
	env := append(baseEnv(), "PAYMENTS_BASE_URL="+baseURL, "PAYMENTS_API_KEY="+apiKey)

	rc := newReceiver(t)
	listen := startProcess(t, env, cliBin, "listen", "--forward-to", rc.URL(), "--interval", "200ms", "--retries", "1s,2s")
	listen.waitFor(t, regexp.MustCompile(`(?m)^Ready: `))
	secret := listen.waitFor(t, secretExport)[1]
	v, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	rc.verify(v)

	trigger := func() string {
		t.Helper()
		cmd := exec.Command(cliBin, "trigger", "payment.completed")
		cmd.Env = env
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		m := regexp.MustCompile(`(?m)^Triggered payment.completed: HTTP 200, stan \S+\n  message:  .+\n  event id: (\S+)\n$`).FindStringSubmatch(string(out))
		require.NotNil(t, m, "%s", out)
		return m[1]
	}

	// A receiver that answers 200 at once.
	first := trigger()
	listen.waitFor(t, attemptLine(payments.EventPaymentCompleted, first, rc.URL(), "[200]", ""))
	assert.Equal(t, []string{first}, rc.processedIDs(), "verified with the printed secret, processed once")

	// A receiver that answers 500, then 200: the retry after 1s gets it.
	rc.mu.Lock()
	failAt := len(rc.headers) + 1
	rc.override = func(n int, _ []byte) int {
		if n == failAt {
			return http.StatusInternalServerError
		}
		return 0
	}
	rc.mu.Unlock()
	second := trigger()
	listen.waitFor(t, attemptLine(payments.EventPaymentCompleted, second, rc.URL(), "[500]", " (attempt 1 of 3, next in 1s)"))
	listen.waitFor(t, attemptLine(payments.EventPaymentCompleted, second, rc.URL(), "[200]", " (attempt 2 of 3)"))
	assert.Equal(t, []string{first, second}, rc.processedIDs())
	assert.Equal(t, 3, rc.requests())

	// Ctrl-C: a clean stop, exit 0.
	require.NoError(t, listen.cmd.Process.Signal(os.Interrupt))
	select {
	case <-listen.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("listen did not stop on SIGINT")
	}
	assert.Equal(t, 0, listen.cmd.ProcessState.ExitCode())
	assert.True(t, strings.HasSuffix(listen.stdout.String(), "  stopped\n"), listen.stdout.String())
	assert.Empty(t, listen.stderr.String())
	assert.NotContains(t, listen.stdout.String(), apiKey)
}
