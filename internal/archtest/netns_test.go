package archtest

import (
	"fmt"
	"go/ast"
	"sort"
	"testing"
)

// nsHome is the one package allowed to switch namespaces.
const nsHome = "internal/netns"

// nsCalls are the calls that switch a thread's namespaces or mount: a
// thread changed by them must be locked and discarded, which only
// internal/netns does right (netns.Do, netns.Start, netns.WithSysfs).
var nsCalls = map[string][]string{
	"runtime":               {"LockOSThread"},
	"golang.org/x/sys/unix": {"Setns", "Unshare", "Mount", "Unmount", "PivotRoot", "Fsmount", "MoveMount"},
	"syscall":               {"Unshare", "Mount", "Unmount", "PivotRoot"},
}

// nsImports are packages whose use is namespace switching.
var nsImports = []string{"github.com/vishvananda/netns"}

// nsSwitches lists where f switches namespaces by itself.
func nsSwitches(f srcFile) []string {
	var out []string
	imps := f.imports()
	for _, p := range nsImports {
		if _, ok := imps[p]; ok {
			out = append(out, fmt.Sprintf("%s: imports %s", f.rel, p))
		}
	}
	byName := map[string]map[string]bool{}
	for p, funcs := range nsCalls {
		if name, ok := imps[p]; ok {
			byName[name] = map[string]bool{}
			for _, fn := range funcs {
				byName[name][fn] = true
			}
		}
	}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && byName[id.Name][sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: %s.%s", f.line(sel.Pos()), id.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}

// Only internal/netns locks threads, calls setns, unshares or mounts.
func TestOnlyNetnsSwitchesNamespaces(t *testing.T) {
	m := findModule(t)
	var bad []string
	home := 0
	for _, f := range sourceFiles(t, m) {
		s := nsSwitches(f)
		if f.pkg == nsHome {
			home += len(s)
			continue
		}
		bad = append(bad, s...)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: namespace switching outside %s; use netns.Do, netns.Start or netns.WithSysfs", b, nsHome)
	}
	if home == 0 {
		t.Errorf("found no namespace switching in %s itself: the check looks for the wrong calls", nsHome)
	}
}
