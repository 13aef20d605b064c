//go:build unix

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/stretchr/testify/require"
)

// The README section that readme_test.go walks, and the ports its commands
// spell out: the only things the test changes in them.
const (
	readmeHeading      = "## Testing without the service: `paymentstest` and `payments-sandbox`"
	readmeSandboxPort  = "8765"
	readmeReceiverPort = "8080"
	sandboxCommand     = "go run ./cmd/payments-sandbox"
	receiverCommand    = "go run ./examples/webhook-receiver"
)

// readmeSteps are the shell blocks of the README section, sorted by role.
type readmeSteps struct {
	sandbox  string   // the line that starts the sandbox
	exports  []string // the export lines the README says the sandbox prints
	receiver string   // the line that starts the receiver
	session  []string // the curl blocks, in order
}

// readmeSection returns the README's section about the sandbox.
func readmeSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/testing.md")
	require.NoError(t, err)
	sec, ok := readmecheck.Section(string(b), readmeHeading)
	require.True(t, ok, "docs/testing.md has no section %q", readmeHeading)
	return sec
}

// shellBlocks returns the contents of the ```sh blocks of a Markdown text.
func shellBlocks(md string) []string {
	var blocks []string
	for _, code := range readmecheck.Code(md, "sh") {
		blocks = append(blocks, strings.TrimSuffix(code, "\n"))
	}
	return blocks
}

// commandLines returns the block's commands, continuation lines joined,
// without comments and blank lines.
func commandLines(block string) []string {
	var out []string
	cont := ""
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if cont == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if strings.HasSuffix(line, "|") { // a pipeline goes on
			cont += line + " "
			continue
		}
		out = append(out, cont+line)
		cont = ""
	}
	return out
}

// sortSteps sorts the section's shell blocks into the roles of a README
// walk: sandbox, its printed exports, receiver, then curl sessions, in
// that order.
func sortSteps(t *testing.T, blocks []string) readmeSteps {
	t.Helper()
	var st readmeSteps
	role := 0 // the last role seen, in README order
	next := func(r int, what string) {
		require.GreaterOrEqual(t, r, role, "the README shows %s out of order", what)
		role = r
	}
	for _, b := range blocks {
		cmds := commandLines(b)
		require.NotEmpty(t, cmds, "an empty sh block:\n%s", b)
		allExports := true
		for _, c := range cmds {
			allExports = allExports && strings.HasPrefix(c, "export ")
		}
		switch {
		case strings.Contains(b, sandboxCommand):
			require.Len(t, cmds, 1, "the sandbox block is one command:\n%s", b)
			require.Empty(t, st.sandbox, "two sandbox blocks")
			next(1, "the sandbox command")
			st.sandbox = cmds[0]
		case allExports:
			require.Nil(t, st.exports, "two export blocks")
			next(2, "the export lines")
			st.exports = cmds
		case strings.Contains(b, receiverCommand):
			require.Len(t, cmds, 1, "the receiver block is one command:\n%s", b)
			require.Empty(t, st.receiver, "two receiver blocks")
			next(3, "the receiver command")
			st.receiver = cmds[0]
		default:
			next(4, "a curl block")
			st.session = append(st.session, b)
		}
	}
	require.NotEmpty(t, st.sandbox, "no %q in the section", sandboxCommand)
	require.NotEmpty(t, st.exports, "no export lines in the section")
	require.NotEmpty(t, st.receiver, "no %q in the section", receiverCommand)
	require.NotEmpty(t, st.session, "no curl block in the section")
	return st
}

// shellWords splits a command line as bash does.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", `printf '%s\0' `+line).Output()
	require.NoError(t, err, line)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// flagValue returns the value of -name in Go flag syntax, or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v
		}
		if a == "-"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// freePorts returns n distinct loopback ports that nothing listens on
// right now.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	var held []net.Listener // until all are picked, so that they differ
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		held = append(held, ln)
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	return ports
}

// buildCommand builds a main package into dir and returns the binary.
func buildCommand(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	require.NoError(t, err, "go build %s:\n%s", pkg, out)
	return bin
}

// startScript runs a bash script in its own process group, until the test
// ends (SIGINT, then SIGKILL after 20 s), with its output in the buffers.
func startScript(t *testing.T, script string, env []string) (stdout, stderr *testlog.Buffer, exited <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = env
	stdout, stderr = new(testlog.Buffer), new(testlog.Buffer)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return stdout, stderr, done
}

// waitFor waits until out contains want, failing if the process exits or
// 60 seconds pass first.
func waitFor(t *testing.T, what string, out, errOut *testlog.Buffer, exited <-chan struct{}, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for !strings.Contains(out.String(), want) {
		select {
		case <-exited:
			t.Fatalf("%s exited before printing %q:\n%s\n%s", what, want, out, errOut)
		case <-ctx.Done():
			t.Fatalf("%s did not print %q:\n%s\n%s", what, want, out, errOut)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// childEnv is the test's environment without proxy settings, which would
// send curl's loopback requests elsewhere, and without PAYMENTS_ variables,
// which the sandbox and the receiver would read: a reader starts from a
// fresh shell.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(strings.ToLower(name), "_proxy") && !strings.HasPrefix(name, "PAYMENTS_") {
			env = append(env, kv)
		}
	}
	return env
}
