package tune

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestKernelTestsJournalWhereCleanupLooks: the kernel tests change the
// machine's own values (rps_sock_flow_entries, every CPU's idle limit),
// so they journal them where `cnibench cleanup` looks, through
// tunetest.HostJournal (journal.DefaultDir), never in a test's own
// directory: a test killed by kill -9 or go test's timeout then leaves a
// journal that cleanup replays. Before, they journaled in t.TempDir(),
// which nothing ever read, and the host kept the test's values.
func TestKernelTestsJournalWhereCleanupLooks(t *testing.T) {
	files, err := filepath.Glob("*kernel*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernel test files (%v)", err)
	}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isSel(call.Fun, "journal", "Open") || len(call.Args) == 0 || isSel(call.Args[0], "journal", "DefaultDir") {
				return true
			}
			t.Errorf("%s: journal.Open outside journal.DefaultDir; use tunetest.HostJournal", f)
			return true
		})
	}
}

func isSel(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg && s.Sel.Name == name
}
