package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// Size limits of issue 10: a file longer than maxFileLines or a function
// longer than maxFuncLines holds more than one thing to read at once.
// Either may be longer when a comment containing "size:" says why: for a
// file, a comment above its imports; for a function, its doc comment or
// a comment inside it.
const (
	maxFileLines = 450
	maxFuncLines = 80
)

// sizeExceptions are files ("path") and functions ("path:Func", methods
// "path:Type.Func") over the limits that carry no "size:" comment yet,
// each with why. An exception no longer needed fails the test, so the
// list only shrinks.
var sizeExceptions = map[string]string{
	"internal/adaptive/adaptive.go:Next":      "size: split pending",
	"internal/cleanup/stale.go:cleaner.stale": "size: split pending",
}

// oversized lists what is over the limits in f without a "size:"
// comment: "path" for the file, "path:Func" for a function, each with
// its length.
func oversized(f srcFile) map[string]int {
	out := map[string]int{}
	file := f.set.File(f.ast.Pos())
	first := f.ast.End()
	if len(f.ast.Decls) > 0 {
		first = f.ast.Decls[0].Pos()
	}
	fileOK := false
	for _, cg := range f.ast.Comments {
		if cg.Pos() < first && strings.Contains(cg.Text(), "size:") {
			fileOK = true
		}
	}
	if n := file.LineCount(); n > maxFileLines && !fileOK {
		out[f.rel] = n
	}
	for _, d := range f.ast.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := f.set.Position(fd.End()).Line - f.set.Position(fd.Pos()).Line + 1
		if n <= maxFuncLines || funcSaysSize(f.ast, fd) {
			continue
		}
		out[f.rel+":"+funcName(fd)] = n
	}
	return out
}

// funcSaysSize reports whether fd's doc or a comment inside it contains
// "size:".
func funcSaysSize(file *ast.File, fd *ast.FuncDecl) bool {
	if fd.Doc != nil && strings.Contains(fd.Doc.Text(), "size:") {
		return true
	}
	for _, cg := range file.Comments {
		if cg.Pos() > fd.Pos() && cg.End() < fd.End() && strings.Contains(cg.Text(), "size:") {
			return true
		}
	}
	return false
}

// funcName is Func, or Type.Func for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// No non-test file is over maxFileLines and no function over
// maxFuncLines unless a "size:" comment says why.
func TestSizes(t *testing.T) {
	m := findModule(t)
	var bad []string
	used := map[string]bool{}
	for _, f := range sourceFiles(t, m) {
		for what, n := range oversized(f) {
			if _, ok := sizeExceptions[what]; ok {
				used[what] = true
				continue
			}
			limit := maxFuncLines
			if what == f.rel {
				limit = maxFileLines
			}
			bad = append(bad, fmt.Sprintf("%s: %d lines, over %d; split it by what it holds, or say why not in a comment containing \"size:\"", what, n, limit))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	for what := range sizeExceptions {
		if !used[what] {
			t.Errorf("size exception %s is no longer needed: remove it from sizeExceptions", what)
		}
	}
}

// The check finds a long file and a long function, and a "size:"
// comment in the right place excuses each.
func TestSizeCheck(t *testing.T) {
	body := strings.Repeat("\t_ = 1\n", maxFuncLines)
	long := "func Long() {\n" + body + "}\n"
	short := "func Short() {}\n"
	pad := strings.Repeat("\n", maxFileLines)
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"long function", "package p\n\n" + long, []string{"p.go:Long"}},
		{"long function with doc", "package p\n\n// size: one table.\n" + long, nil},
		{"long function with inner comment", "package p\n\nfunc Long() {\n\t// size: one table.\n" + body + "}\n", nil},
		{"comment elsewhere", "package p\n\n// size: not this one.\n" + short + "\n" + long, []string{"p.go:Long"}},
		{"long method", "package p\n\ntype T struct{}\n\nfunc (*T) Long() {\n" + body + "}\n", []string{"p.go:T.Long"}},
		{"long file", "package p\n\n" + short + pad, []string{"p.go"}},
		{"long file with header", "package p\n\n// size: generated table.\n\n" + short + pad, nil},
		{"short", "package p\n\n" + short, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := token.NewFileSet()
			f, err := parser.ParseFile(set, "p.go", tc.src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for what := range oversized(srcFile{rel: "p.go", pkg: ".", ast: f, set: set}) {
				got = append(got, what)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("oversized = %v, want %v", got, tc.want)
			}
		})
	}
}
