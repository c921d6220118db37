package study

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A study with anchors and merge keys (in nodes, datapaths, tunings,
// workloads and profiles) resolves to the same study as the one with
// them written out, with and without its profiles.
func TestMergeKeysResolveAsWrittenOut(t *testing.T) {
	merged, err := os.ReadFile("testdata/valid-merge-keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile("testdata/merge-keys-written-out.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"", "quick", "quicker"} {
		a, err := Parse("merged.yaml", merged, Options{Profile: profile}, testCatalog)
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		b, err := Parse("plain.yaml", plain, Options{Profile: profile}, testCatalog)
		if err != nil {
			t.Fatalf("profile %q, written out: %v", profile, err)
		}
		ya, _ := a.Marshal()
		yb, _ := b.Marshal()
		if !bytes.Equal(ya, yb) {
			t.Errorf("profile %q: merged study resolves to\n%s\nwritten out to\n%s", profile, ya, yb)
		}
	}
	s, _ := Parse("merged.yaml", merged, Options{Profile: "quicker"}, testCatalog)
	if s.Spec.Trials.Min != 1 || s.Spec.Duration.Duration != 4*time.Second {
		t.Errorf("profile quicker (quick merged, trials its own): trials %+v, duration %v", s.Spec.Trials, s.Spec.Duration)
	}
}

// Keys written in the mapping win over merged ones wherever they stand;
// of a list of merged mappings the earlier wins; a merged mapping's own
// merge key is expanded first.
func TestMergeKeyPrecedence(t *testing.T) {
	src := workloadStudy("[{tool: iperf3}]")
	src = strings.Replace(src, "  tunings: [baseline]\n", `  tunings:
    - &a {name: a, rps: {cpus: all}, side: client}
    - &b {name: b, rps: {cpus: "0"}, pods: true, side: both}
    - {name: c, <<: [*a, *b]}
    - {<<: [*b, *a], name: d, side: server}
    - {<<: {<<: *a, name: e0, pods: true}, name: e}
    - {<<: *b, rps: {cpus: "1"}, name: f}
`, 1)
	if !strings.Contains(src, "&a") {
		t.Fatal("the test study has no tunings to replace")
	}
	s, err := Parse("p.yaml", []byte(src), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a all client false", "b 0 both true", "c all client true", "d 0 server true", "e all client true", "f 1 both true"}
	for i, tu := range s.Spec.Tunings {
		got := fmt.Sprintf("%s %s %s %v", tu.Name, tu.RPS.CPUs, tu.Side, tu.Pods)
		if i >= len(want) || got != want[i] {
			t.Errorf("tunings[%d] = %s, want %s", i, got, want[min(i, len(want)-1)])
		}
	}
}

// Every alias is a copy: a --set of one place leaves the place that
// shares its anchor (or merges it) as written. Before expansion, setting
// nodes.server.cpus changed nodes.client too, and replacing the anchored
// node left the alias naming no anchor ("unknown anchor 'n' referenced").
func TestSetDoesNotChangeSharedAnchor(t *testing.T) {
	src := strings.Replace(workloadStudy("[{tool: iperf3}]"), "  tunings: [baseline]\n", `  tunings: [baseline]
  nodes:
    server: &n {cpus: "1"}
    client: *n
`, 1)
	for _, set := range []string{`nodes.server.cpus=0`, `nodes.server={cpus: "0"}`} {
		s, err := Parse("s.yaml", []byte(src), Options{Set: []string{set}}, testCatalog)
		if err != nil {
			t.Fatalf("--set %s: %v", set, err)
		}
		if n := s.Spec.Nodes; n.Server.CPUs != "0" || n.Client.CPUs != "1" {
			t.Errorf("--set %s: server %q, client %q; want 0 and 1 (the client's is the anchor's as written)", set, n.Server.CPUs, n.Client.CPUs)
		}
	}
	src = strings.Replace(workloadStudy("[{tool: iperf3}]"), "  tunings: [baseline]\n", `  tunings:
    - &a {name: a, rps: {cpus: all}}
    - {<<: *a, name: b}
`, 1)
	s, err := Parse("s.yaml", []byte(src), Options{Set: []string{"tunings.b.rps.cpus=0"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if tu := s.Spec.Tunings; tu[0].RPS.CPUs != "all" || tu[1].RPS.CPUs != "0" {
		t.Errorf("--set tunings.b.rps.cpus=0: a's rps %q, b's %q; want all and 0", tu[0].RPS.CPUs, tu[1].RPS.CPUs)
	}
}

// A --set value's own anchors and merge keys are expanded too.
func TestSetValueMergeKeys(t *testing.T) {
	src := []byte(workloadStudy("[{tool: iperf3}]"))
	s, err := Parse("v.yaml", src, Options{Set: []string{`tunings=[&r {name: r, rps: {cpus: all}}, {<<: *r, name: r2, pods: true}]`}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if tu := s.Spec.Tunings; len(tu) != 2 || tu[1].Name != "r2" || tu[1].RPS == nil || tu[1].RPS.CPUs != "all" || !tu[1].Pods {
		t.Errorf("tunings from --set with a merge key: %+v", tu)
	}
	_, err = Parse("v.yaml", src, Options{Set: []string{`tunings=[{<<: 5, name: r}]`}}, testCatalog)
	want := `v.yaml (--set): tunings=[{<<: 5, name: r}]: a merge key's value is a mapping, an alias of one (<<: *base) or a list of those (<<: [*a, *b]), not "5"`
	if err == nil || err.Error() != want {
		t.Errorf("--set with a merge of a number:\n got %v\nwant %s", err, want)
	}
}

// mergeStudy is a valid study whose tunings and workloads are given as
// block lists (with their "    - " items).
func mergeStudy(tunings, workloads string) string {
	return "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: m}\nspec:\n" +
		"  nodes:\n    server: &n {cpus: \"1\"}\n    client: {cpus: \"0\"}\n" + // server: line 6
		"  datapaths: [calico-vxlan]\n  trials: 3\n  duration: 10s\n" +
		"  tunings:\n" + tunings /* from line 12 */ + "  workloads:\n" + workloads
}

// A bad merge value, and a bad field a merge brought, are reported at
// the line they are written on, as FieldErrors (exit 2).
func TestMergeKeyErrors(t *testing.T) {
	tcp := "    - {name: tcp, tool: iperf3}\n"
	bomb := "  x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
	for i := 1; i <= 9; i++ {
		bomb += fmt.Sprintf("  x%d: &x%d [*x%d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d, *x%[3]d]\n", i, i, i-1)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"scalar", mergeStudy("    - {name: a, <<: 5}\n", tcp),
			`m.yaml:12: spec.tunings[0].<<: a merge key's value is a mapping, an alias of one (<<: *base) or a list of those (<<: [*a, *b]), not "5"`},
		{"list item", mergeStudy("    - &a {name: a}\n    - name: b\n      <<:\n        - *a\n        - [x]\n", tcp),
			`m.yaml:16: spec.tunings[1].<<: a merge key's value is a mapping, an alias of one (<<: *base) or a list of those (<<: [*a, *b]), not a list`},
		{"alias of a list", mergeStudy("    - &l [1]\n    - {name: b, <<: *l}\n", tcp),
			`m.yaml:13: spec.tunings[1].<<: a merge key's value is a mapping`},
		{"null", mergeStudy("    - {name: b, <<: ~}\n", tcp), `m.yaml:12: spec.tunings[0].<<: a merge key's value is a mapping, an alias of one (<<: *base) or a list of those (<<: [*a, *b]), not null`},
		{"two merge keys", mergeStudy("    - {name: b, <<: *n, <<: *n}\n", tcp), `m.yaml:12: spec.tunings[0].<<: a second merge key (<<) in one mapping`},
		// A node's cpus merged into a tuning: the tuning has no such
		// field, at the line the field is written on.
		{"field merged", mergeStudy("    - {<<: *n, name: t}\n", tcp), `m.yaml:6: spec.tunings[0].cpus: unknown tuning field "cpus"`},
		// A workload field merged where the tool has no such option:
		// Validate's error, located at the anchor's line of the key.
		{"option merged", mergeStudy("    - baseline\n", "    - &w\n      name: tcp\n      tool: iperf3\n      length: 64K\n    - <<: *w\n      name: rr\n      tool: sockperf\n"),
			`m.yaml:17: spec.workloads[1].length: tool sockperf has no option length`},
		{"unknown field merged", mergeStudy("    - baseline\n", "    - &w {name: tcp, tool: iperf3}\n  only:\n    - {<<: *w, replicas: 1}\n"),
			`m.yaml:14: spec.only[0].name: unknown field "name"`},
		{"cycle", mergeStudy("    - baseline\n", tcp) + "  reference:\n    - &r {note: [*r]}\n", `m.yaml:16: spec.reference[0].note[0]: alias *r is inside the node it names (anchored &r on line 16)`},
		{"second document", mergeStudy("    - {<<: *n, name: t}\n", tcp) + "---\nkind: Study\n", `m.yaml:16: a second YAML document begins here`},
		{"alias bomb", mergeStudy("    - baseline\n", tcp) + bomb, `m.yaml:19: spec.x4[7]: aliases expand the study past 100000 YAML nodes`},
	} {
		_, err := Parse("m.yaml", []byte(tc.src), Options{}, testCatalog)
		var fe *FieldError
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.As(err, &fe) {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// The alias bound holds below yaml.v3's own: a few levels of aliases
// that stay under it expand.
func TestAliasBoundAllowsNesting(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	n, err := expandAliases(doc.Content[0], "")
	if err != nil {
		t.Fatal(err)
	}
	if c := child(n, "c"); len(c.Content) != 10 || len(c.Content[9].Content) != 10 || c.Content[9].Content[9].Content[9].Value != "x" {
		t.Errorf("c expanded to %+v", c)
	}
}

// FuzzExpandAliases: expanding never panics; what it expands holds no
// alias, no merge key, no anchor and no node twice, and decodes to what
// yaml.v3's decoder makes of the text itself (it merges keys too).
func FuzzExpandAliases(f *testing.F) {
	for _, s := range []string{
		"a: &a {x: 1, y: 2}\nb: {<<: *a, y: 3}\n",
		"a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc: {<<: [*a, *b], w: 0}\nd: {<<: [*b, *a]}\n",
		"a: &a {<<: {p: 1, q: 1}, q: 2}\nb: {q: 3, <<: *a}\n",
		"a: &a [1, 2]\nb: {<<: *a}\n",
		"a: {<<: 5}\n",
		"a: &a {b: *a}\n",
		"a: {<<: {x: 1}, '<<': literal}\n",
		"a: &a {1: one, 0x2: two}\nb: {<<: *a, 1: uno, 2: dos}\n",
		"a: &x [a, a, a]\nb: &y [*x, *x, *x]\nc: [*y, *y, *y]\n",
		"- &k key\n- {*k : v}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			return
		}
		n, err := expandAliases(doc.Content[0], "")
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		seen := map[*yaml.Node]bool{}
		var walk func(*yaml.Node)
		walk = func(c *yaml.Node) {
			if seen[c] || c.Kind == yaml.AliasNode || c.Anchor != "" {
				t.Fatalf("node %q (kind %v, anchor %q) twice or still an alias or anchor", c.Value, c.Kind, c.Anchor)
			}
			seen[c] = true
			for i, k := range c.Content {
				if c.Kind == yaml.MappingNode && i%2 == 0 && isMergeKey(k) {
					t.Fatalf("merge key left at line %d", k.Line)
				}
				walk(k)
			}
		}
		walk(n)
		// Keys other than strings are left out: yaml.v3 decodes a mapping
		// with a merge key into a map of string keys, and so makes "00"
		// of a merged 00 that is 0 in the expanded mapping. A study's keys
		// are strings.
		var want, got any
		if !stringKeysOnly(&doc) || yaml.Unmarshal(data, &want) != nil || n.Decode(&got) != nil {
			return // yaml.v3 refuses what was expanded (a key twice, excessive aliasing)
		}
		w, werr := yaml.Marshal(want)
		g, gerr := yaml.Marshal(got)
		if werr == nil && gerr == nil && !bytes.Equal(w, g) {
			t.Errorf("yaml.v3 decodes\n%s\nthe expanded tree\n%s", w, g)
		}
	})
}

// stringKeysOnly reports whether every key of every mapping under n but
// merge keys is a string (an alias's are its anchor's, looked at where
// the anchor is written).
func stringKeysOnly(n *yaml.Node) bool {
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && !isMergeKey(c) && (c.Kind != yaml.ScalarNode || c.ShortTag() != "!!str") {
			return false
		}
		if !stringKeysOnly(c) {
			return false
		}
	}
	return true
}
