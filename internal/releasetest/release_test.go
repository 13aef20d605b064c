package releasetest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// gitEnv is the environment of the git commands in a scratch clone: an
// identity of its own, and no configuration of the machine's.
func gitEnv(t *testing.T) []string {
	t.Helper()
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=Release Test", "GIT_AUTHOR_EMAIL=release@example.com",
		"GIT_COMMITTER_NAME=Release Test", "GIT_COMMITTER_EMAIL=release@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// scratchClone clones the checkout's committed HEAD into a new directory.
func scratchClone(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	run(t, root, gitEnv(t), "git", "clone", "-q", "--no-hardlinks", root, dir)
	return dir
}

// prepareRelease does in dir what RELEASING.md asks before .ci/release:
// the [Unreleased] entries become the version's section, and Version is set.
func prepareRelease(t *testing.T, dir, version string) {
	t.Helper()
	edit := func(name string, re *regexp.Regexp, repl string) {
		t.Helper()
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !re.Match(b) {
			t.Fatalf("%s has no %s", name, re)
		}
		if err := os.WriteFile(p, re.ReplaceAll(b, []byte(repl)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := strings.TrimPrefix(version, "v")
	edit("CHANGELOG.md", regexp.MustCompile(`(?m)^## \[Unreleased\]$`), "## [Unreleased]\n\n## ["+v+"] - 2026-11-25")
	edit("CHANGELOG.md", regexp.MustCompile(`(?m)^\[Unreleased\]: .*$`), "[Unreleased]: https://github.com/paymentsapi/payments-go/compare/"+version+"...HEAD\n["+v+"]: https://github.com/paymentsapi/payments-go/releases/tag/"+version)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	versionRE := regexp.MustCompile(`(?m)^const Version = ".*"$`)
	for _, f := range files {
		if b, _ := os.ReadFile(f); versionRE.Match(b) {
			edit(filepath.Base(f), versionRE, `const Version = "`+v+`"`)
		}
	}
	env := gitEnv(t)
	run(t, dir, env, "git", "commit", "-q", "-am", "Prepare "+version)
}

// release runs .ci/release in dir and returns its output and error.
func release(t *testing.T, dir, version string) (string, error) {
	t.Helper()
	return tryRun(dir, gitEnv(t), filepath.Join(dir, ".ci", "release"), version)
}

// TestReleaseScriptTagsWhatAProxyServes runs .ci/release in a scratch clone
// of this checkout, as a maintainer would, and checks its tags and go.mod
// files by serving the modules from those tags (git archive, as a module
// proxy does) to a merchant's module that runs the README's Install
// commands, and installs the payments command with docs/cli.md's line. It
// also checks that the script refuses a version that CHANGELOG.md does not
// record, a Version constant that differs, a replace line in the command's
// go.mod and a dirty work tree, tagging nothing.
func TestReleaseScriptTagsWhatAProxyServes(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds a module proxy; skipped with -short")
	}
	t.Parallel()
	root := repoRoot(t)
	dir := scratchClone(t, root)
	const version = "v0.99.0"

	if out, err := release(t, dir, version); err == nil || !strings.Contains(out, "newest release of CHANGELOG.md") {
		t.Errorf("a release CHANGELOG.md does not record: err %v, output\n%s", err, out)
	}
	prepareRelease(t, dir, version)
	if out, err := release(t, dir, "v0.98.0"); err == nil || !strings.Contains(out, "not [0.98.0]") {
		t.Errorf("a release older than CHANGELOG.md's newest: err %v, output\n%s", err, out)
	}
	// go install PATH@VERSION refuses a go.mod with replace lines.
	cliMod := filepath.Join(dir, "cmd", "payments", "go.mod")
	run(t, dir, nil, "go", "mod", "edit", "-replace", rootPath+"=../..", cliMod)
	run(t, dir, gitEnv(t), "git", "commit", "-q", "-am", "a replace line in the command's go.mod")
	if out, err := release(t, dir, version); err == nil || !strings.Contains(out, "cmd/payments/go.mod has replace lines") {
		t.Errorf("a replace line in cmd/payments/go.mod: err %v, output\n%s", err, out)
	}
	run(t, dir, gitEnv(t), "git", "reset", "-q", "--hard", "HEAD~1")
	if err := os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := release(t, dir, version); err == nil || !strings.Contains(out, "uncommitted changes") {
		t.Errorf("a dirty work tree: err %v, output\n%s", err, out)
	}
	if err := os.Remove(filepath.Join(dir, "stray.txt")); err != nil {
		t.Fatal(err)
	}
	if tags := run(t, dir, nil, "git", "tag", "-l"); tags != "" {
		t.Fatalf("a refused release left tags: %q", tags)
	}

	if out, err := release(t, dir, version); err != nil {
		t.Fatalf(".ci/release %s: %v\n%s", version, err, out)
	}
	var want []string
	for _, d := range published {
		want = append(want, tagOf(d, version))
	}
	got := strings.Fields(run(t, dir, nil, "git", "tag", "--points-at", "HEAD"))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the release commit has tags %q, want %q", got, want)
	}
	if s := run(t, dir, nil, "git", "status", "--porcelain"); s != "" {
		t.Errorf("the release left changes uncommitted:\n%s", s)
	}
	// Every go.mod of the tagged tree requires the published modules at the
	// release (the same check TestModulesInstallFromAProxy makes).
	if got := requiredRelease(t, dir); got != version {
		t.Errorf("the tagged go.mod files require %s, want %s", got, version)
	}
	for _, d := range published[1:] {
		f, err := modfile.ParseLax("go.mod", gitShow(t, dir, tagOf(d, version), path(d, "go.mod")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(f.Require, func(r *modfile.Require) bool { return r.Mod.Path == rootPath && r.Mod.Version == version }) {
			t.Errorf("%s at tag %s does not require %s %s", path(d, "go.mod"), tagOf(d, version), rootPath, version)
		}
	}

	readme := readFile(t, dir, "README.md")
	proxy := buildProxy(t, source{root: dir, fromTags: true}, version)
	modcache := filepath.Join(t.TempDir(), "modcache")
	checkInstall(t, readme, proxy, modcache, version)
	checkEachAlone(t, readme, proxy, modcache, version)
	checkCommandInstall(t, readFile(t, dir, "docs/cli.md"), proxy, modcache, version)
}
