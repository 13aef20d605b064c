package outcometest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var cli struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// RunCLI builds the payments command once per test process and runs it
// with args and env added, returning its stdout, stderr and exit code.
func RunCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "payments-cli-")
		if err != nil {
			cli.err = err
			return
		}
		cli.path = filepath.Join(dir, "payments")
		cmd := exec.Command("go", "build", "-o", cli.path, "github.com/paymentsapi/payments-go/cmd/payments")
		cli.out, cli.err = cmd.CombinedOutput()
	})
	if cli.err != nil {
		t.Fatalf("building the payments command: %v\n%s", cli.err, cli.out)
	}
	cmd := exec.Command(cli.path, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}
