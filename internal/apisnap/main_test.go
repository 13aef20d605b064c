package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (path relative to dir -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

const fixtureLib = `// Package lib is a fixture.
package lib

import (
	"errors"
	"net/http"
	"time"
)

// Kind is documented.
type Kind int

const (
	KindA Kind = iota + 1 // a comment
	KindB
	kindHidden
	KindD
)

const Timeout = 5 * time.Second

const (
	Name, name2 = "n", "m"
)

var ErrBad = errors.New("lib: bad")

var Table = map[string]int{"a": 1}

var Hook func(w http.ResponseWriter, r *http.Request) error

var unexportedVar = 1

// Client does things.
type Client struct {
	// Timeout is documented.
	Timeout    time.Duration ` + "`json:\"timeout\"`" + `
	A, b, C    int
	inner      string
	Inline     struct{ X, Y int }
	embedded
	*http.Client
}

type embedded struct {
	Promoted string
	hidden   int
}

func (e *embedded) Visible(ctx string) error { return nil }
func (e *embedded) invisible()               {}

// Do does.
func (c *Client) Do(req *http.Request, opts ...Option) (resp *http.Response, err error) {
	return nil, nil
}

func (c *Client) private() {}

type Option func(c *Client)

type Sealed interface {
	Get(key string) (value string, ok bool)
	seal()
}

type Open interface {
	Sealed
	Put(key, value string)
}

type Number interface{ ~int | ~float64 }

type Set[T comparable] struct{ items map[T]struct{} }

func (s *Set[T]) Add(v T) {}

func Map[T, U any](in []T, f func(v T) U) []U { return nil }

type Alias = Client

type unexported struct{ Field int }

func (unexported) Method() {}

func New(timeout time.Duration) *Client { return nil }

func helper() {}
`

const fixtureWant = `package lib // import "example.com/m/lib"

const KindA Kind = iota + 1 // iota = 0
const KindB Kind = iota + 1 // iota = 1
const KindD Kind = iota + 1 // iota = 3
const Name = "n"
const Timeout = 5 * time.Second
func Map[T, U any]([]T, func(T) U) []U
func New(time.Duration) *Client
method (*Client) Do(*http.Request, ...Option) (*http.Response, error)
method (*Set[T]) Add(T)
method (*embedded) Visible(string) error
type Alias = Client
type Client struct
type Client struct, A int
type Client struct, C int
type Client struct, Inline struct{X, Y int}
type Client struct, Timeout time.Duration ` + "`json:\"timeout\"`" + `
type Client struct, embedded *http.Client
type Client struct, embedded embedded
type Kind int
type Number interface
type Number interface, embedded ~int | ~float64
type Open interface
type Open interface, Put(string, string)
type Open interface, embedded Sealed
type Option func(*Client)
type Sealed interface
type Sealed interface, Get(string) (string, bool)
type Sealed interface, unexported methods
type Set[T comparable] struct
type embedded struct
type embedded struct, Promoted string
var ErrBad = errors.New(…)
var Hook func(http.ResponseWriter, *http.Request) error
var Table = map[string]int{…}
`

// fixtureModule is a module with one public package, lib, and everything the
// snapshot must leave out, plus a nested module.
func fixtureModule(t *testing.T, lib string) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":                     "module example.com/m\n\ngo 1.24\n",
		"lib/lib.go":                 lib,
		"lib/lib_test.go":            "package lib\n\nfunc TestOnly() {}\n",
		"lib/ignored.go":             "//go:build ignore\n\npackage main\n\nfunc Ignored() {}\n",
		"internal/x/x.go":            "package x\n\nfunc Internal() {}\n",
		"lib/internal/y/y.go":        "package y\n\nfunc Internal() {}\n",
		"cmd/tool/main.go":           "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
		"lib/testdata/t/t.go":        "package t\n\nfunc Testdata() {}\n",
		".hidden/h.go":               "package h\n\nfunc Hidden() {}\n",
		"docs/README.md":             "not Go\n",
		"nested/go.mod":              "module example.com/nested\n\ngo 1.24\n",
		"nested/store/store.go":      "package store\n\n// Open opens.\nfunc Open(path string) error { return nil }\n",
		"nested/store/doc_test.go":   "package store_test\n",
		"nested/empty/doc.go":        "// Package empty has no exported names.\npackage empty\n",
		"nested/empty/unexported.go": "package empty\n\nfunc hidden() {}\n",
	})
	return dir
}

func TestExtract(t *testing.T) {
	pkgs, err := Extract(fixtureModule(t, fixtureLib))
	require.NoError(t, err)

	var paths []string
	for _, p := range pkgs {
		paths = append(paths, p.ImportPath)
	}
	assert.Equal(t, []string{"example.com/m/lib", "example.com/nested/empty", "example.com/nested/store"}, paths,
		"test files, internal packages, package main, testdata, hidden directories and ignored files are left out; nested modules have their own path")

	assert.Equal(t, Header+fixtureWant, pkgs[0].Text())
	assert.Equal(t, "example.com_m_lib.txt", pkgs[0].FileName())
	assert.Equal(t, Header+"package empty // import \"example.com/nested/empty\"\n\n", pkgs[1].Text(),
		"a package without exported names is still recorded, so that removing it shows")
	assert.Equal(t, []string{"func Open(string) error"}, pkgs[2].Features)
}

// TestExtractIgnoresWhatIsNotAPI: doc comments, parameter names, bodies,
// unexported names and the order of declarations change nothing; a new
// exported name, a changed signature, a changed constant or a changed tag
// change the snapshot.
func TestExtractIgnoresWhatIsNotAPI(t *testing.T) {
	text := func(lib string) string {
		pkgs, err := Extract(fixtureModule(t, lib))
		require.NoError(t, err)
		return pkgs[0].Text()
	}
	base := text(fixtureLib)

	same := map[string]string{
		"doc comment":     strings.Replace(fixtureLib, "// Do does.", "// Do does something else entirely.\n// Really.", 1),
		"parameter names": strings.Replace(fixtureLib, "Do(req *http.Request, opts ...Option) (resp *http.Response, err error)", "Do(r *http.Request, o ...Option) (*http.Response, error)", 1),
		"body":            strings.Replace(fixtureLib, "func helper() {}", "func helper() { println(1) }", 1),
		"unexported":      fixtureLib + "\nfunc another() {}\n\ntype more struct{ X int }\n",
		"error text":      strings.Replace(fixtureLib, `errors.New("lib: bad")`, `errors.New("lib: worse")`, 1),
		"order":           strings.Replace(fixtureLib, "func helper() {}", "", 1) + "\nfunc helper() {}\n",
		"layout":          strings.Replace(fixtureLib, "Inline     struct{ X, Y int }", "Inline struct {\n\t\tX, Y int\n\t}", 1),
	}
	for name, lib := range same {
		assert.Equal(t, base, text(lib), name)
	}

	changed := map[string]string{
		"new func":        fixtureLib + "\nfunc Added() {}\n",
		"new method":      fixtureLib + "\nfunc (c *Client) Added() {}\n",
		"promoted method": fixtureLib + "\nfunc (e embedded) Added() {}\n",
		"signature":       strings.Replace(fixtureLib, "func New(timeout time.Duration) *Client", "func New(timeout time.Duration, name string) *Client", 1),
		"constant value":  strings.Replace(fixtureLib, "5 * time.Second", "6 * time.Second", 1),
		"iota order":      strings.Replace(fixtureLib, "\tkindHidden\n", "", 1),
		"struct tag":      strings.Replace(fixtureLib, "json:\"timeout\"", "json:\"timeout,omitempty\"", 1),
		"field type":      strings.Replace(fixtureLib, "A, b, C    int", "A, b, C    int64", 1),
		"interface":       strings.Replace(fixtureLib, "\tseal()\n", "", 1),
		"var type":        strings.Replace(fixtureLib, `errors.New("lib: bad")`, `fmt.Errorf("lib: bad")`, 1),
		"removed type":    strings.Replace(fixtureLib, "type Alias = Client", "", 1),
	}
	for name, lib := range changed {
		assert.NotEqual(t, base, text(lib), name)
	}
}

func TestWriteDirRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"example.com_gone.txt": "old\n",
		"README.md":            "kept: not a snapshot file\n",
	})
	pkgs := []Package{{ImportPath: "example.com/m", Name: "m", Features: []string{"func F()"}}}
	require.NoError(t, WriteDir(dir, pkgs))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"README.md", "example.com_m.txt"}, names)
	got, err := os.ReadFile(filepath.Join(dir, "example.com_m.txt"))
	require.NoError(t, err)
	assert.Equal(t, Header+"package m // import \"example.com/m\"\n\nfunc F()\n", string(got))
}
