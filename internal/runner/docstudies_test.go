package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// The whole studies the docs show (study-format.md's main example,
// README's) pass preflight's pure checks on a machine of enough CPUs,
// not only parsing (app.TestDocsStudiesParse): study-format.md's once
// pinned the server node to 2-3 and steered RPS to 0-2, which
// checkRPSCPUs refuses.
func TestDocsStudiesPassPreflight(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	n := 0
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range wholeStudies(string(b)) {
			n++
			s, err := study.Parse(filepath.Base(f), []byte(block), study.Options{}, cat)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if _, err := preflight(context.Background(), stubEngine{machine: cpuset.Range(8)}, s); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d whole studies in the docs, want README's and study-format.md's", n)
	}
}

// wholeStudies are the yaml blocks of a Markdown page that are whole
// study files (they start with apiVersion).
func wholeStudies(page string) []string {
	var out, cur []string
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```yaml":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			if len(cur) > 0 && strings.HasPrefix(cur[0], "apiVersion:") {
				out = append(out, strings.Join(cur, "\n")+"\n")
			}
		case in:
			cur = append(cur, line)
		}
	}
	return out
}
