// Package archtest keeps the code to the map in docs/architecture.md: it
// reads the map's "Layers" section and fails when a package imports one
// of a higher layer or is in no layer, and when code outside
// internal/netns switches namespaces, and when a file or a function is
// over the size limits (size_test.go). Its tests are pure: they parse
// source files and the map, and need neither root nor a build.
package archtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mapFile is the architecture map, relative to the module root.
const mapFile = "docs/architecture.md"

// exceptions are imports of a higher layer the map tolerates for now:
// {importing package, imported package} -> why it is not fixed yet. An
// exception that is no longer needed fails the test, so the list only
// shrinks.
var exceptions = map[[2]string]string{
	// runner.Run builds report.html when a run ends. The call belongs to
	// the CLI (internal/app, after runner.Run returns); moving it waits
	// for the runner rewrite of issue 10 (engine.Engine), which owns
	// runner.go at the time this list was written.
	{"internal/runner", "internal/report"}: "runner.Run builds the report",
}

// layer is one item of the map's Layers list.
type layer struct {
	n        int // 1 = lowest
	title    string
	patterns []string
}

func (l layer) String() string { return fmt.Sprintf("layer %d, %s", l.n, l.title) }

var (
	itemRE    = regexp.MustCompile(`^(\d+)\.\s+(.*)$`)
	quotedRE  = regexp.MustCompile("`([^`]*)`")
	patternRE = regexp.MustCompile(`^[a-z0-9_.-]+(/[a-z0-9_.-]+)*(/\.\.\.)?$`)
)

// parseLayers reads the "## Layers" section of the map: a numbered
// list, lowest layer first, whose items name package patterns in
// backquotes (`p` is package p, `p/...` is p and everything under it).
// An item may continue on indented lines.
func parseLayers(doc string) ([]layer, error) {
	var ls []layer
	in := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(line) == "## Layers"
			continue
		}
		if !in {
			continue
		}
		if m := itemRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n != len(ls)+1 {
				return nil, fmt.Errorf("line %d: layer %d follows layer %d; number them 1, 2, ... lowest first", i+1, n, len(ls))
			}
			title, _, _ := strings.Cut(m[2], ":")
			ls = append(ls, layer{n: n, title: strings.TrimSpace(title)})
		} else if len(ls) == 0 || strings.TrimSpace(line) == "" || !strings.HasPrefix(line, " ") {
			continue
		}
		for _, q := range quotedRE.FindAllStringSubmatch(line, -1) {
			if !patternRE.MatchString(q[1]) || strings.Contains(strings.TrimSuffix(q[1], "/..."), "..") {
				return nil, fmt.Errorf("line %d: %q is not a package pattern (only patterns are quoted in the list)", i+1, q[1])
			}
			ls[len(ls)-1].patterns = append(ls[len(ls)-1].patterns, q[1])
		}
	}
	if len(ls) < 2 {
		return nil, fmt.Errorf("no \"## Layers\" list of at least two layers")
	}
	seen := map[string]int{}
	for _, l := range ls {
		if len(l.patterns) == 0 {
			return nil, fmt.Errorf("%v names no package", l)
		}
		for _, p := range l.patterns {
			if prev, dup := seen[p]; dup {
				return nil, fmt.Errorf("pattern %s is in layer %d and layer %d", p, prev, l.n)
			}
			seen[p] = l.n
		}
	}
	return ls, nil
}

// place returns the index of the layer of pkg (a path relative to the
// module root) and the pattern that put it there: the longest pattern
// that covers it, an exact one before a `/...` one of the same path.
func place(ls []layer, pkg string) (int, string, bool) {
	best, bestLen, bestPat := -1, -1, ""
	for i, l := range ls {
		for _, p := range l.patterns {
			base, tree := strings.CutSuffix(p, "/...")
			if pkg != base && !(tree && strings.HasPrefix(pkg, base+"/")) {
				continue
			}
			score := 2 * len(base)
			if !tree {
				score++
			}
			if score > bestLen {
				best, bestLen, bestPat = i, score, p
			}
		}
	}
	return best, bestPat, best >= 0
}

// importRef is one import of a module package by a file.
type importRef struct {
	where    string // file:line
	from, to string // package paths relative to the module root
}

// check returns what breaks the layering, and which exceptions were
// needed. pkgs are every package (with one of its files, for messages).
func check(ls []layer, pkgs map[string]string, refs []importRef, exc map[[2]string]string) (problems []string, used map[[2]string]bool) {
	used = map[[2]string]bool{}
	for pkg, file := range pkgs {
		if _, _, ok := place(ls, pkg); !ok {
			problems = append(problems, fmt.Sprintf("%s: package %s is in no layer of %s", file, pkg, mapFile))
		}
	}
	for _, r := range refs {
		from, _, ok1 := place(ls, r.from)
		to, pat, ok2 := place(ls, r.to)
		switch {
		case !ok1:
			// Reported above.
		case !ok2 && pkgs[r.to] != "":
			// Reported above, once for the package.
		case !ok2:
			problems = append(problems, fmt.Sprintf("%s: %s imports %s, which is in no layer of %s", r.where, r.from, r.to, mapFile))
		case to > from:
			key := [2]string{r.from, r.to}
			if _, ok := exc[key]; ok {
				used[key] = true
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: %s (%v) imports %s (%v, by %s): a higher layer",
				r.where, r.from, ls[from], r.to, ls[to], pat))
		}
	}
	sort.Strings(problems)
	return problems, used
}

func TestImportsFollowLayers(t *testing.T) {
	m := findModule(t)
	doc, err := os.ReadFile(filepath.Join(m.dir, mapFile))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := parseLayers(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", mapFile, err)
	}
	pkgs := map[string]string{}
	var refs []importRef
	for _, f := range sourceFiles(t, m) {
		if _, ok := pkgs[f.pkg]; !ok {
			pkgs[f.pkg] = f.rel
		}
		for _, is := range f.ast.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if rel, ok := strings.CutPrefix(p, m.path+"/"); ok {
				refs = append(refs, importRef{where: f.line(is.Pos()), from: f.pkg, to: rel})
			}
		}
	}
	problems, used := check(ls, pkgs, refs, exceptions)
	for _, p := range problems {
		t.Error(p)
	}
	for key, why := range exceptions {
		if !used[key] {
			t.Errorf("exception %s -> %s (%s) is no longer needed: remove it from the list", key[0], key[1], why)
		}
	}
}

// The parser and the checker on a small map: they must be able to fail.
func TestLayerCheck(t *testing.T) {
	doc := "# map\n\n## Layers\n\nIntro with `not/a/layer`.\n\n" +
		"1. Bottom: `a`, `b/...`\n" +
		"2. Middle: `c`,\n   `b/up` (continued)\n" +
		"3. Top: `d/...`\n\n## Next\n\n4. Not a layer: `e`\n"
	ls, err := parseLayers(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 || strings.Join(ls[1].patterns, " ") != "c b/up" || ls[2].title != "Top" {
		t.Fatalf("parsed %+v", ls)
	}
	for pkg, want := range map[string]int{"a": 0, "b": 0, "b/x/y": 0, "b/up": 1, "b/up/z": 0, "c": 1, "d": 2, "d/e": 2} {
		if got, _, ok := place(ls, pkg); !ok || got != want {
			t.Errorf("place(%s) = %d, %v; want %d", pkg, got, ok, want)
		}
	}
	if _, _, ok := place(ls, "ab"); ok {
		t.Error("pattern a covers ab")
	}
	pkgs := map[string]string{"a": "a/a.go", "c": "c/c.go", "d/e": "d/e/e.go", "x": "x/x.go"}
	refs := []importRef{
		{"c/c.go:3", "c", "a"},     // down: fine
		{"a/a.go:3", "a", "b/q"},   // same layer: fine
		{"a/a.go:4", "a", "c"},     // up
		{"c/c.go:4", "c", "d/e"},   // up, excepted
		{"d/e/e.go:5", "d/e", "y"}, // y is in no layer
	}
	problems, used := check(ls, pkgs, refs, map[[2]string]string{{"c", "d/e"}: "why", {"a", "d"}: "stale"})
	want := []string{
		"a/a.go:4: a (layer 1, Bottom) imports c (layer 2, Middle, by c): a higher layer",
		"d/e/e.go:5: d/e imports y, which is in no layer of " + mapFile,
		"x/x.go: package x is in no layer of " + mapFile,
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
	if !used[[2]string{"c", "d/e"}] || used[[2]string{"a", "d"}] {
		t.Errorf("exceptions used %v", used)
	}
	for _, bad := range []string{
		"## Layers\n1. A: `a`\n3. B: `b`\n",
		"## Layers\n1. A: `a`\n2. B: `Node`\n",
		"## Layers\n1. A: `a`\n2. B: `a`\n",
		"## Layers\n1. A: `a`\n2. B: none\n",
		"## Layers\n1. A: `a`\n",
		"## Other\n1. A: `a`\n2. B: `b`\n",
	} {
		if _, err := parseLayers(bad); err == nil {
			t.Errorf("parseLayers accepted %q", bad)
		}
	}
}
