package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// Every whole study file the docs show (a yaml block that starts with
// apiVersion) is valid as this binary reads it: the reference example in
// study-format.md once selected tunings its own list no longer had.
func TestDocsStudiesParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(b)) {
			if !strings.HasPrefix(block, "apiVersion:") {
				continue
			}
			found++
			if _, err := study.Parse(filepath.Base(f), []byte(block), study.Options{}, studyCatalog()); err != nil {
				t.Errorf("%s, yaml block %d: %v", f, i+1, err)
			}
		}
	}
	if found < 2 {
		t.Errorf("found %d whole studies in the docs, want README's and study-format.md's", found)
	}
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
