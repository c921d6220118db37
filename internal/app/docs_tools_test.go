package app

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload/registry"
)

// docs/workloads.md's table of tools lists each tool's options exactly
// as its driver describes them ("name/sweep" where the option has a list
// form, "protocol" where it takes more than one protocol): qperf's row
// once left out target, which every driver takes.
func TestDocsToolOptions(t *testing.T) {
	b, err := os.ReadFile("../../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| tool | what it measures | seeds | options |\n")
	if !ok {
		t.Fatal("docs/workloads.md has no table of tools (| tool | what it measures | seeds | options |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		// | `tool` | what | seeds | `opt`, `opt`/`opts` |
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var opts []string
		for _, o := range strings.Split(cells[4], ",") {
			opts = append(opts, strings.ReplaceAll(strings.TrimSpace(o), "`", ""))
		}
		rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = opts
	}
	for _, tool := range registry.Tools() {
		var want []string
		if len(tool.Protocols) > 1 {
			want = append(want, "protocol")
		}
		for _, o := range tool.Options {
			if o.Sweep != "" {
				want = append(want, o.Name+"/"+o.Sweep)
				continue
			}
			want = append(want, o.Name)
		}
		got, ok := rows[tool.Name]
		if !ok {
			t.Errorf("docs/workloads.md has no row for tool %s", tool.Name)
			continue
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("docs/workloads.md lists %s's options as %q, its driver %q", tool.Name, got, want)
		}
	}
}
