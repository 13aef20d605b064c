package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Knobs: issue 35 wants at most 40 With… functions across the public
// packages of every module, and no exported test seam (a …Clock option). The
// snapshot in api/ holds every exported func of every public package (the
// guard keeps it equal to the code), so the count is read from there.

// withFunc matches a snapshot line that declares a With… function and
// captures its name.
var withFunc = regexp.MustCompile(`^func (With[A-Za-z0-9_]*)\(`)

// withFuncs returns, for each snapshot file of dir, the names of its With…
// functions, keyed by the package's import path.
func withFuncs(dir string) (map[string][]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(files))
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		var pkg string
		var names []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "package "); ok && pkg == "" {
				// package webhook // import "github.com/.../webhook"
				if _, path, ok := strings.Cut(rest, `// import "`); ok {
					pkg = strings.TrimSuffix(path, `"`)
				}
			}
			if m := withFunc.FindStringSubmatch(line); m != nil {
				names = append(names, m[1])
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
		if pkg == "" {
			pkg = strings.TrimSuffix(filepath.Base(file), ".txt")
		}
		out[pkg] = names
	}
	return out, nil
}
