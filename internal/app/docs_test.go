package app

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/study"
)

// Every study the docs show is valid as this binary reads it: a whole
// study file (a yaml block that starts with apiVersion) as it is, a
// fragment (a workloads list, some tunings, a spec's fields) wrapped into
// a minimal study by docFragments. The reference example in
// study-format.md once selected tunings its own list no longer had, and
// workloads.md's podstartup example once gave concurrency as a number.
func TestDocsStudiesParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	whole, fragments := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(b)) {
			where := fmt.Sprintf("%s, yaml block %d", f, i+1)
			name, file := filepath.Base(f), []byte(block)
			if strings.HasPrefix(block, "apiVersion:") {
				whole++
			} else {
				file, err = wrapFragment(block)
				if errors.Is(err, errNotStudy) {
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				// Its lines are the wrapped study's, shown below.
				name = "wrapped.yaml"
				fragments++
			}
			if _, err := study.Parse(name, file, study.Options{}, studyCatalog()); err != nil {
				t.Errorf("%s: %v\n%s", where, err, file)
			}
		}
	}
	if whole < 2 || fragments < 10 {
		t.Errorf("found %d whole studies and %d fragments in the docs, want README's and study-format.md's and at least 10", whole, fragments)
	}
}

// docFragments say how a yaml block of the docs that is not a whole
// study becomes one, by its first key: which spec fields it gives. The
// rest of the spec is minimalSpec's.
var docFragments = []struct {
	first string // the block's first key; "-" for a list
	spec  func(block any) map[string]any
}{
	// A spec, or a part of one.
	{"spec", func(b any) map[string]any { return asMap(asMap(b)["spec"]) }},
	// A spec beside a top-level x- block its aliases use: parsed as
	// written by TestDocsAnchorExamples (here yaml.v3 would resolve the
	// aliases before the study's parser saw them).
	{"x-fast-node", nil},
	// Fields of a spec, as they are.
	{"workloads", asMap},
	{"tunings", asMap},
	{"datapaths", asMap},
	{"verdict", asMap},
	// A list of entries: workloads if they name a tool, else tunings.
	{"-", func(b any) map[string]any {
		if _, ok := asMap(b.([]any)[0])["tool"]; ok {
			return map[string]any{"workloads": b}
		}
		return map[string]any{"tunings": b}
	}},
	// An advise rule file (advise.md): internal/advise's tests parse it.
	{"name", nil},
}

var errNotStudy = errors.New("not a study")

// wrapFragment turns a fragment of a study into a whole one.
func wrapFragment(block string) ([]byte, error) {
	block = dedent(block)
	var b any
	if err := yaml.Unmarshal([]byte(block), &b); err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(block), ":")
	if _, ok := b.([]any); ok {
		first = "-"
	}
	for _, k := range docFragments {
		if k.first != first {
			continue
		}
		if k.spec == nil {
			return nil, errNotStudy
		}
		spec := minimalSpec()
		maps.Copy(spec, k.spec(b))
		return yaml.Marshal(map[string]any{
			"apiVersion": "cnibench/v1alpha1", "kind": "Study",
			"metadata": map[string]any{"name": "doc-fragment"}, "spec": spec,
		})
	}
	return nil, fmt.Errorf("a fragment starting %q: add a row to docFragments saying how to make it a study", first)
}

// minimalSpec is the smallest valid spec, which a fragment's fields
// replace.
func minimalSpec() map[string]any {
	return map[string]any{
		"datapaths": []any{"flannel-vxlan"},
		"tunings":   []any{"baseline"},
		"workloads": []any{map[string]any{"name": "tcp", "tool": "iperf3"}},
		"replicas":  []any{1},
		"trials":    1,
		"duration":  "10s",
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// dedent removes the indent of a block's first line from every line: a
// fragment shown as it sits under spec.
func dedent(block string) string {
	first := strings.TrimLeft(block, "\n")
	indent := first[:len(first)-len(strings.TrimLeft(first, " "))]
	var out []string
	for _, line := range strings.Split(block, "\n") {
		out = append(out, strings.TrimPrefix(line, indent))
	}
	return strings.Join(out, "\n")
}

// yamlBlocks are the bodies of a Markdown page's ```yaml blocks.
func yamlBlocks(page string) []string {
	var out []string
	var cur []string
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```yaml":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			out = append(out, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, line)
		}
	}
	return out
}
