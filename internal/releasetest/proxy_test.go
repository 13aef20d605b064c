package releasetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// rootPath is the root module's path; the published modules are it and the
// satellites, each in the directory named by its path below it.
const rootPath = "github.com/paymentsapi/payments-go"

// libraries are the directories (from the repository's root) of the modules
// that a merchant's module requires, with the README's "go get" lines: "" is
// the root.
var libraries = []string{"", "eventstore/pgstore", "eventstore/redisstore", "openapi", "paymentsotel"}

// commands are the directories of the modules a developer installs with
// "go install PATH@VERSION" (docs/cli.md): the payments command.
var commands = []string{"cmd/payments"}

// published are the directories of every module that a release tags and a
// proxy serves: the libraries and the commands.
var published = append(append([]string(nil), libraries...), commands...)

// modulePath returns the path of the published module in dir.
func modulePath(dir string) string {
	if dir == "" {
		return rootPath
	}
	return rootPath + "/" + dir
}

// tagOf returns the tag of the published module in dir at version, as the go
// command looks for it in a multi-module repository.
func tagOf(dir, version string) string {
	if dir == "" {
		return version
	}
	return dir + "/" + version
}

// repoRoot returns the checkout's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at %s: %v", root, err)
	}
	return root
}

// repoModFiles returns the go.mod files of the repository other than the
// root's, from the root (the satellites, the examples, the docs' modules).
func repoModFiles(t *testing.T, root string) []string {
	t.Helper()
	var mods []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" && p != filepath.Join(root, "go.mod") {
			rel, _ := filepath.Rel(root, p)
			mods = append(mods, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// requiredRelease returns the version at which the go.mod files under root
// require the published modules, after checking that they all name one and
// the same release version (vMAJOR.MINOR.PATCH, never a pseudo-version). On
// a disagreement it reports each offender and returns the highest release
// version found, so that the proxy test still runs and shows what a
// consumer would meet.
func requiredRelease(t *testing.T, root string) string {
	t.Helper()
	releaseRE := regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`)
	isPublished := map[string]bool{}
	for _, dir := range published {
		isPublished[modulePath(dir)] = true
	}
	found := map[string][]string{} // version -> "file requires module"
	for _, name := range repoModFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.ParseLax(name, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Require {
			if isPublished[r.Mod.Path] {
				found[r.Mod.Version] = append(found[r.Mod.Version], name+" requires "+r.Mod.Path)
			}
		}
	}
	best := ""
	for v, who := range found {
		if !releaseRE.MatchString(v) {
			t.Errorf("%s at %s: a consumer's build cannot fetch that version; require the release (.ci/release sets it)", strings.Join(who, ", "), v)
			continue
		}
		if best == "" || semver.Compare(v, best) > 0 {
			best = v
		}
	}
	if len(found) > 1 {
		t.Errorf("the modules require each other at different versions: %v", found)
	}
	if best == "" {
		t.Fatalf("no module requires a published module at a release version: %v", found)
	}
	return best
}

// source says where the proxy takes a module's files from.
type source struct {
	root string // the checkout, or a clone
	// fromTags, when set, makes each module's zip from its tag in the git
	// repository at root (git archive, as a proxy does), else from the
	// files in the directory as they are.
	fromTags bool
}

// buildProxy writes a file-system module proxy, the layout GOPROXY=file://
// reads, holding each published module at version, and returns its
// directory.
func buildProxy(t *testing.T, src source, version string) string {
	t.Helper()
	proxy := t.TempDir()
	for _, dir := range published {
		mod := module.Version{Path: modulePath(dir), Version: version}
		escaped, err := module.EscapePath(mod.Path)
		if err != nil {
			t.Fatal(err)
		}
		vdir := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			t.Fatal(err)
		}
		zipFile, err := os.Create(filepath.Join(vdir, version+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		var goMod []byte
		if src.fromTags {
			err = zip.CreateFromVCS(zipFile, mod, src.root, "refs/tags/"+tagOf(dir, version), dir)
			if err == nil {
				goMod = gitShow(t, src.root, tagOf(dir, version), path(dir, "go.mod"))
			}
		} else {
			err = zip.CreateFromDir(zipFile, mod, filepath.Join(src.root, filepath.FromSlash(dir)))
			if err == nil {
				goMod, err = os.ReadFile(filepath.Join(src.root, filepath.FromSlash(dir), "go.mod"))
			}
		}
		if cerr := zipFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("module zip of %s: %v", mod, err)
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  goMod,
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return proxy
}

// path joins a module's directory and a file name with slashes.
func path(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// gitShow returns a file of the git repository at dir as of rev.
func gitShow(t *testing.T, dir, rev, file string) []byte {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "show", rev+":"+file).Output()
	if err != nil {
		t.Fatalf("git show %s:%s: %v", rev, file, err)
	}
	return out
}

// outsideEnv is the environment of a go command run in a merchant's module:
// no workspace, and the module cache modcache, not the real one, so that the
// candidate never lands there. Modules come from the file proxy first (ours,
// at the release version), then from the local module cache's download
// directory (what the workspace's own build already fetched, so that a
// machine that has it needs no network), and then from the proxies the
// environment names (GOPROXY, proxy.golang.org by default), for a
// third-party version that minimal version selection picks outside the
// workspace and the workspace never downloaded: a fresh machine's module
// cache holds none of them. Each falls through to the next on a file it has
// not got. Third-party modules are checked against the checksum database as
// a merchant's are; ours, which it has never seen, are not (GONOSUMDB), and
// checkServedFromProxy proves they are the bytes of the file proxy.
func outsideEnv(t *testing.T, proxy, modcache string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("go env GOMODCACHE GOPROXY printed %q", out)
	}
	download := filepath.Join(strings.TrimSpace(lines[0]), "cache", "download")
	proxies := fileURL(proxy) + "," + fileURL(download)
	if upstream := strings.TrimSpace(lines[1]); upstream != "" {
		proxies += "," + upstream
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY="+proxies,
		"GONOSUMDB="+rootPath,
		"GOPRIVATE=",
		"GONOPROXY=",
		"GOTOOLCHAIN=local",
		"GOMODCACHE="+modcache,
	)
}

// checkServedFromProxy checks the h1: hashes that text (a go.sum, or the
// output of go version -m) records for the published modules at version
// against the zips of the file proxy, and that it records at least the
// modules of want (directories): a module of ours fetched from anywhere else
// (a public proxy further down GOPROXY, the real module cache) fails here.
func checkServedFromProxy(t *testing.T, what, text, proxy, version string, want []string) {
	t.Helper()
	for _, dir := range published {
		mod := modulePath(dir)
		re := regexp.MustCompile(`(?m)^\s*(?:(?:mod|dep)\s+)?` + regexp.QuoteMeta(mod) + `\s+` + regexp.QuoteMeta(version) + `\s+(h1:\S+)`)
		m := re.FindStringSubmatch(text)
		if m == nil {
			if slices.Contains(want, dir) {
				t.Errorf("%s records no hash of %s %s:\n%s", what, mod, version, text)
			}
			continue
		}
		escaped, err := module.EscapePath(mod)
		if err != nil {
			t.Fatal(err)
		}
		served, err := dirhash.HashZip(filepath.Join(proxy, filepath.FromSlash(escaped), "@v", version+".zip"), dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		if m[1] != served {
			t.Errorf("%s records %s %s as %s, but the file proxy served %s: the module came from elsewhere", what, mod, version, m[1], served)
		}
	}
}

// fileURL returns the file:// URL of an absolute directory.
func fileURL(dir string) string {
	return "file://" + filepath.ToSlash(dir)
}

// run runs a command in dir with env and returns its combined output,
// failing the test when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := tryRun(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return out
}

// tryRun runs a command in dir with env and returns its combined output.
func tryRun(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%w", err)
	}
	return string(out), nil
}
