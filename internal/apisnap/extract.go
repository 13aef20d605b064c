package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/printer"
	"go/token"
	"slices"
	"strings"
)

// The extractor: one package's exported API as sorted lines, with
// signatures and no doc comments.

// extractPackage parses the files of one package; it returns nil for a
// package main or a directory whose every file is marked ignore.
func extractPackage(importPath string, files []string) (*Package, error) {
	fset := token.NewFileSet()
	x := &extractor{fset: fset, seen: map[string]bool{}}
	name := ""
	var decls []ast.Decl
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if ignored(f) {
			continue
		}
		switch {
		case name == "":
			name = f.Name.Name
		case name != f.Name.Name:
			return nil, fmt.Errorf("%s: package %s, but other files say package %s", file, f.Name.Name, name)
		}
		decls = append(decls, f.Decls...)
	}
	if name == "" || name == "main" {
		return nil, nil
	}
	x.promoted = promotedTypes(decls)
	for _, d := range decls {
		x.decl(d)
	}
	if x.err != nil {
		return nil, x.err
	}
	slices.Sort(x.features)
	return &Package{ImportPath: importPath, Name: name, Features: x.features}, nil
}

// ignored reports whether a file's build constraint names the tag "ignore",
// the convention for files that are never part of the package.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				continue
			}
			mentions := false
			expr.Eval(func(tag string) bool {
				mentions = mentions || tag == "ignore"
				return true
			})
			if mentions {
				return true
			}
		}
	}
	return false
}

// promotedTypes returns the unexported types of a package whose fields and
// methods an exported type exposes by embedding them, directly or through
// other such types: their exported members are part of the API (a Payment's
// LastResponse is a method of the unexported apiResource it embeds).
func promotedTypes(decls []ast.Decl) map[string]bool {
	specs := map[string]*ast.TypeSpec{}
	for _, d := range decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				specs[ts.Name.Name] = ts
			}
		}
	}
	promoted := map[string]bool{}
	var visit func(ts *ast.TypeSpec)
	visit = func(ts *ast.TypeSpec) {
		var fields *ast.FieldList
		switch t := ts.Type.(type) {
		case *ast.StructType:
			fields = t.Fields
		case *ast.InterfaceType:
			fields = t.Methods
		default:
			return
		}
		for _, f := range fields.List {
			if len(f.Names) != 0 {
				continue
			}
			n := baseTypeName(f.Type)
			if inner, ok := specs[n]; ok && !ast.IsExported(n) && !promoted[n] {
				promoted[n] = true
				visit(inner)
			}
		}
	}
	for name, ts := range specs {
		if ast.IsExported(name) {
			visit(ts)
		}
	}
	return promoted
}

type extractor struct {
	fset     *token.FileSet
	promoted map[string]bool // unexported types whose exported members are promoted
	features []string
	seen     map[string]bool
	err      error
}

// public reports whether a type's exported members are part of the API.
func (x *extractor) public(typeName string) bool {
	return ast.IsExported(typeName) || x.promoted[typeName]
}

func (x *extractor) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !x.seen[s] {
		x.seen[s] = true
		x.features = append(x.features, s)
	}
}

func (x *extractor) decl(d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		x.funcDecl(d)
	case *ast.GenDecl:
		switch d.Tok {
		case token.CONST:
			x.constDecl(d)
		case token.VAR:
			x.varDecl(d)
		case token.TYPE:
			for _, s := range d.Specs {
				x.typeSpec(s.(*ast.TypeSpec))
			}
		}
	}
}

func (x *extractor) funcDecl(d *ast.FuncDecl) {
	if !d.Name.IsExported() {
		return
	}
	sig := x.signature(d.Type)
	if d.Recv == nil {
		x.add("func %s%s%s", d.Name.Name, x.typeParams(d.Type.TypeParams), sig)
		return
	}
	recv := d.Recv.List[0].Type
	if !x.public(baseTypeName(recv)) {
		return
	}
	x.add("method (%s) %s%s", x.expr(recv), d.Name.Name, sig)
}

// baseTypeName is the name of the type of a receiver: T for T, *T, T[K] and *T[K].
func baseTypeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// constDecl prints each exported constant with its type and value, repeating
// the previous spec's type and expression for the specs of a group that omit
// them, as the language does; iota's value is printed beside an expression
// that uses it.
func (x *extractor) constDecl(d *ast.GenDecl) {
	var typ ast.Expr
	var values []ast.Expr
	for iotaValue, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		if vs.Values != nil {
			typ, values = vs.Type, vs.Values
		}
		for i, n := range vs.Names {
			if !n.IsExported() {
				continue
			}
			line := "const " + n.Name
			if typ != nil {
				line += " " + x.expr(typ)
			}
			if i < len(values) {
				line += " = " + x.expr(values[i])
				if usesIota(values[i]) {
					line += fmt.Sprintf(" // iota = %d", iotaValue)
				}
			}
			x.add("%s", line)
		}
	}
}

func usesIota(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
			found = true
		}
		return !found
	})
	return found
}

func (x *extractor) varDecl(d *ast.GenDecl) {
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if !n.IsExported() {
				continue
			}
			switch {
			case vs.Type != nil:
				x.add("var %s %s", n.Name, x.expr(vs.Type))
			case len(vs.Values) == len(vs.Names):
				x.add("var %s = %s", n.Name, x.expr(shape(vs.Values[i])))
			case len(vs.Values) == 1: // var a, b = f()
				x.add("var %s = %s // value %d of %d", n.Name, x.expr(shape(vs.Values[0])), i+1, len(vs.Names))
			}
		}
	}
}

// shape returns an initialiser with what does not decide its type left out:
// the arguments of a call and the elements of a composite literal. The
// callee of a call and the type of a literal are kept.
func shape(e ast.Expr) ast.Expr {
	switch v := e.(type) {
	case *ast.CallExpr:
		if len(v.Args) == 0 {
			return v
		}
		return &ast.CallExpr{Fun: v.Fun, Args: []ast.Expr{ellipsis()}}
	case *ast.CompositeLit:
		if len(v.Elts) == 0 {
			return v
		}
		return &ast.CompositeLit{Type: v.Type, Elts: []ast.Expr{ellipsis()}}
	case *ast.UnaryExpr:
		return &ast.UnaryExpr{Op: v.Op, X: shape(v.X)}
	case *ast.ParenExpr:
		return shape(v.X)
	case *ast.FuncLit:
		return &ast.FuncLit{Type: v.Type, Body: &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: ellipsis()}}}}
	}
	return e
}

func ellipsis() ast.Expr { return ast.NewIdent("…") }

func (x *extractor) typeSpec(s *ast.TypeSpec) {
	if !x.public(s.Name.Name) {
		return
	}
	head := "type " + s.Name.Name + x.typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		x.add("%s = %s", head, x.expr(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		head += " struct"
		x.add("%s", head)
		for _, f := range t.Fields.List {
			tag := ""
			if f.Tag != nil {
				tag = " " + f.Tag.Value
			}
			if len(f.Names) == 0 {
				x.add("%s, embedded %s%s", head, x.expr(f.Type), tag)
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					x.add("%s, %s %s%s", head, n.Name, x.expr(f.Type), tag)
				}
			}
		}
	case *ast.InterfaceType:
		head += " interface"
		x.add("%s", head)
		for _, f := range t.Methods.List {
			if len(f.Names) == 0 { // an embedded interface or a type set
				x.add("%s, embedded %s", head, x.expr(f.Type))
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					x.add("%s, %s%s", head, n.Name, x.signature(f.Type.(*ast.FuncType)))
				} else {
					// Its presence matters: no other package can implement the interface.
					x.add("%s, unexported methods", head)
				}
			}
		}
	default:
		x.add("%s %s", head, x.expr(s.Type))
	}
}

func (x *extractor) typeParams(l *ast.FieldList) string {
	if l == nil || len(l.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range l.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		parts = append(parts, strings.Join(names, ", ")+" "+x.expr(f.Type))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature prints a function type's parameters and results without the
// leading "func".
func (x *extractor) signature(ft *ast.FuncType) string {
	s := x.expr(&ast.FuncType{Params: ft.Params, Results: ft.Results})
	return strings.TrimPrefix(s, "func")
}

// expr prints an expression on one line, with the parameter names of every
// function type in it removed.
func (x *extractor) expr(e ast.Expr) string {
	ast.Inspect(e, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			unname(ft.Params)
			unname(ft.Results)
		}
		return true
	})
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, x.fset, e); err != nil {
		x.err = errors.Join(x.err, err)
	}
	return oneLine(buf.String())
}

// unname replaces "a, b int" by "int, int" in a parameter or result list.
func unname(l *ast.FieldList) {
	if l == nil {
		return
	}
	var fields []*ast.Field
	for _, f := range l.List {
		n := max(len(f.Names), 1)
		for range n {
			fields = append(fields, &ast.Field{Type: f.Type})
		}
	}
	l.List = fields
}

// oneLine prints what go/printer laid out on several lines (an inline struct
// or interface type) on one, the same whatever the source's layout:
// "struct{X, Y int; Z string}".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			parts = append(parts, l)
		}
	}
	s = strings.Join(parts, "; ")
	s = strings.NewReplacer("struct {", "struct{", "interface {", "interface{").Replace(s)
	return strings.NewReplacer("{; ", "{", "; }", "}", "{ ", "{", " }", "}").Replace(s)
}
