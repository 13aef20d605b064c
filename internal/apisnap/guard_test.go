package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scratchClone clones the repository this test runs in (its committed HEAD,
// not the working tree) into a temporary directory.
func scratchClone(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"git", "bash", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	top, err := exec.Command("git", "-C", "../..", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	out, err := exec.Command("git", "clone", "--quiet", strings.TrimSpace(string(top)), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir
}

// runIn runs a command in dir with the workspace of dir (not the caller's
// GOWORK or GOFLAGS) and a git identity of its own.
func runIn(t *testing.T, dir string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOWORK=", "GOFLAGS=",
		"GIT_AUTHOR_NAME=apisnap test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=apisnap test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	out, err := runIn(t, dir, name, args...)
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return out
}

// TestGuardFailsOnAnUnrecordedAPIChange runs .ci/api on a scratch clone of
// the repository: it passes as committed, fails when one exported function is
// added (printing the function and how to update), passes again once the
// snapshot is updated, and then fails until the commit that changed the
// snapshot also changes CHANGELOG.md.
func TestGuardFailsOnAnUnrecordedAPIChange(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and runs .ci/api; skipped with -short")
	}
	repo := scratchClone(t)
	git := func(args ...string) string { return mustRun(t, repo, "git", args...) }

	// The snapshot as committed may trail the code while branches are being
	// merged (CI's own run of .ci/api reports that); start this test from a
	// current one, recorded as the rule asks.
	mustRun(t, repo, "bash", ".ci/api", "-update")
	if git("status", "--porcelain") != "" {
		require.NoError(t, appendFile(filepath.Join(repo, "CHANGELOG.md"), "\n- (test) snapshot refreshed\n"))
		git("add", "-A")
		git("commit", "--quiet", "-m", "refresh the snapshot")
	}
	out, err := runIn(t, repo, "bash", ".ci/api")
	require.NoError(t, err, "the guard must pass on the repository as committed:\n%s", out)

	// One exported function more in package webhook.
	added := filepath.Join(repo, "webhook", "zz_guard_added.go")
	require.NoError(t, os.WriteFile(added, []byte("package webhook\n\n// AddedByTheGuardTest is new.\nfunc AddedByTheGuardTest(n int) error { return nil }\n"), 0o644))
	out, err = runIn(t, repo, "bash", ".ci/api")
	require.Error(t, err, "the guard passed with a new exported function:\n%s", out)
	assert.Contains(t, out, "+++ api/github.com_paymentsapi_payments-go_webhook.txt (code)")
	assert.Contains(t, out, "+func AddedByTheGuardTest(int) error")
	assert.Contains(t, out, ".ci/api -update")

	// Recorded in the snapshot: the API check passes, but not without a
	// changelog entry, neither before the commit nor after it.
	mustRun(t, repo, "bash", ".ci/api", "-update")
	out, err = runIn(t, repo, "bash", ".ci/api")
	require.Error(t, err, "uncommitted snapshot change without a CHANGELOG.md change passed:\n%s", out)
	assert.Contains(t, out, "CHANGELOG.md has none")
	assert.NotContains(t, out, "differs from the snapshot")

	git("add", "-A")
	git("commit", "--quiet", "-m", "Add AddedByTheGuardTest")
	out, err = runIn(t, repo, "bash", ".ci/api")
	require.Error(t, err, "a commit changing api/ without CHANGELOG.md passed:\n%s", out)
	assert.Contains(t, out, "change the API snapshot (api/) but not CHANGELOG.md")
	assert.Contains(t, out, "Add AddedByTheGuardTest")

	require.NoError(t, appendFile(filepath.Join(repo, "CHANGELOG.md"), "\n- (test) webhook.AddedByTheGuardTest\n"))
	git("commit", "--quiet", "--amend", "--no-edit", "-a")
	out, err = runIn(t, repo, "bash", ".ci/api")
	require.NoError(t, err, "the guard must pass once the change is recorded:\n%s", out)

	// A comment or a parameter name is not the API.
	require.NoError(t, os.WriteFile(added, []byte("package webhook\n\n// AddedByTheGuardTest is documented differently.\nfunc AddedByTheGuardTest(count int) error { return nil }\n"), 0o644))
	out, err = runIn(t, repo, "bash", ".ci/api")
	require.NoError(t, err, "a doc comment and a parameter name changed the API:\n%s", out)
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}
