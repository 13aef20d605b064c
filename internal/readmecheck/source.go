package readmecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// The parts of a Go file a marker names: a function's body, a whole
// function, a region or the whole file, and the check that a test runs them.

// extractSource returns the named parts of file, dedented and joined by a
// blank line.
func (c Checker) extractSource(file string, names []string) (string, error) {
	src, err := c.read(file)
	if err != nil {
		return "", err
	}
	var f *ast.File
	fset := token.NewFileSet()
	if strings.HasSuffix(file, ".go") {
		if f, err = parser.ParseFile(fset, file, src, parser.ParseComments); err != nil {
			return "", err
		}
	}
	var parts []string
	for _, name := range names {
		var part string
		switch {
		case name == "file:":
			part = string(src)
		case strings.HasPrefix(name, "region:"):
			part, err = region(string(src), strings.TrimPrefix(name, "region:"))
		case f == nil:
			err = fmt.Errorf("%s is not a Go file: name a region:NAME part", file)
		case strings.HasPrefix(name, "func:"):
			part, err = funcDecl(f, fset, src, strings.TrimPrefix(name, "func:"), c.compileOnlyOK)
		default:
			part, err = funcBody(f, fset, src, name, c.compileOnlyOK)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		parts = append(parts, Dedent(part))
	}
	return strings.Join(parts, "\n"), nil
}

func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == name {
			return fn
		}
	}
	return nil
}

// funcBody returns the lines inside the braces of func name, which must be
// an Example that checks its output, or a Test.
func funcBody(f *ast.File, fset *token.FileSet, src []byte, name string, compileOnlyOK bool) (string, error) {
	fn := findFunc(f, name)
	if fn == nil {
		return "", fmt.Errorf("no func %s", name)
	}
	if !compileOnlyOK && !runsAndChecks(f, fn) {
		return "", fmt.Errorf("func %s is neither an Example with an // Output: comment nor a Test, so no test runs it", name)
	}
	body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
	return string(body), nil
}

// funcDecl returns the declaration of func name, from its doc comment to its
// closing brace. An Example that checks its output, or a Test, of the same
// file must use it, directly or through other functions of the file.
func funcDecl(f *ast.File, fset *token.FileSet, src []byte, name string, compileOnlyOK bool) (string, error) {
	fn := findFunc(f, name)
	if fn == nil {
		return "", fmt.Errorf("no func %s", name)
	}
	if !compileOnlyOK && !reachedByRunner(f, name) {
		return "", fmt.Errorf("func %s is used by no Example with an // Output: comment and no Test of the file", name)
	}
	start := fn.Pos()
	if fn.Doc != nil {
		start = fn.Doc.Pos()
	}
	return string(src[fset.Position(start).Offset:fset.Position(fn.End()).Offset]), nil
}

// reachedByRunner reports whether a function that go test runs and checks
// (see runsAndChecks) uses func name, directly or through other functions
// of the file.
func reachedByRunner(f *ast.File, name string) bool {
	uses := map[string][]string{} // func -> the funcs of the file it names
	var queue []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && findFunc(f, id.Name) != nil {
				uses[fn.Name.Name] = append(uses[fn.Name.Name], id.Name)
			}
			return true
		})
		if runsAndChecks(f, fn) {
			queue = append(queue, fn.Name.Name)
		}
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, used := range uses[cur] {
			if used == name {
				return true
			}
			if !seen[used] {
				seen[used] = true
				queue = append(queue, used)
			}
		}
	}
	return false
}

// runsAndChecks reports whether go test runs fn and checks it: a Test, or an
// Example with an output comment.
func runsAndChecks(f *ast.File, fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if strings.HasPrefix(name, "Test") {
		return true
	}
	if !strings.HasPrefix(name, "Example") {
		return false
	}
	for _, cg := range f.Comments {
		if cg.Pos() < fn.Body.Lbrace || cg.End() > fn.Body.Rbrace {
			continue
		}
		for _, c := range cg.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if strings.HasPrefix(text, "Output:") || strings.HasPrefix(text, "Unordered output:") {
				return true
			}
		}
	}
	return false
}

// region returns the lines between "// region name" and the next
// "// endregion".
func region(src, name string) (string, error) {
	var (
		out    []string
		inside bool
	)
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !inside && t == "// region "+name:
			inside = true
		case inside && t == "// endregion":
			return strings.Join(out, "\n"), nil
		case inside:
			out = append(out, line)
		}
	}
	if inside {
		return "", fmt.Errorf("region %s has no // endregion", name)
	}
	return "", fmt.Errorf("no // region %s", name)
}
