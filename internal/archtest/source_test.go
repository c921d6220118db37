package archtest

import (
	"bufio"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the module's root directory and path.
type module struct {
	dir, path string
}

// findModule walks up from the test's directory to go.mod.
func findModule(t *testing.T) module {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return module{dir: dir, path: strings.Trim(strings.TrimSpace(p), `"`)}
				}
			}
			t.Fatalf("%s/go.mod has no module line", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// srcFile is one parsed non-test Go file of the module.
type srcFile struct {
	rel string // file path relative to the module root, with slashes
	pkg string // its package's path relative to the module root
	ast *ast.File
	set *token.FileSet
}

// imports returns the file's imports: path -> the name the file uses.
func (f srcFile) imports() map[string]string {
	out := map[string]string{}
	for _, is := range f.ast.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := path.Base(p)
		if is.Name != nil {
			name = is.Name.Name
		}
		out[p] = name
	}
	return out
}

// line returns the file:line of a position, for messages.
func (f srcFile) line(pos token.Pos) string {
	return f.rel + ":" + strconv.Itoa(f.set.Position(pos).Line)
}

// sourceFiles parses every non-test .go file of the module, as the go
// tool sees packages: directories named testdata or starting with "." or
// "_" are not packages, and neither are other modules' trees. Build
// constraints are ignored, so every platform's files are checked.
func sourceFiles(t *testing.T, m module) []srcFile {
	t.Helper()
	set := token.NewFileSet()
	var out []srcFile
	err := filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != m.dir && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != m.dir && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(set, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.dir, p)
		rel = filepath.ToSlash(rel)
		out = append(out, srcFile{rel: rel, pkg: path.Dir(rel), ast: f, set: set})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal(errors.New("no Go files found"))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}
