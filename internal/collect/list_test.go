package collect

import (
	"fmt"
	"strings"
	"testing"
)

// Every collector in List describes itself completely and has a unique
// name: docs and errors name it, and the study must be able to switch it.
func TestListEntriesComplete(t *testing.T) {
	for _, p := range problems(List) {
		t.Error(p)
	}
}

func problems(list []Entry) []string {
	var out []string
	seen := map[string]bool{}
	for i, e := range list {
		switch {
		case e.Name == "" || strings.ContainsAny(e.Name, " \t"):
			out = append(out, fmt.Sprintf("collector %d: bad name %q", i, e.Name))
		case seen[e.Name]:
			out = append(out, fmt.Sprintf("collector %s listed twice", e.Name))
		case len(e.Description) < 20:
			out = append(out, fmt.Sprintf("collector %s: description %q says too little", e.Name, e.Description))
		case len(e.Metrics) == 0:
			out = append(out, fmt.Sprintf("collector %s: names no metric", e.Name))
		case e.Enabled == nil:
			out = append(out, fmt.Sprintf("collector %s: no Enabled (how does a study switch it on?)", e.Name))
		case e.New == nil:
			out = append(out, fmt.Sprintf("collector %s: no New", e.Name))
		}
		seen[e.Name] = true
	}
	return out
}

// The check fails on an incomplete entry (it is not vacuous).
func TestListCheckCatchesIncomplete(t *testing.T) {
	d, m, n := cpuEntry.Description, []string{"m"}, cpuEntry.New
	for _, bad := range [][]Entry{
		{{Name: "x", Metrics: m, Enabled: always, New: n}},
		{{Name: "x", Description: d, Enabled: always, New: n}},
		{{Name: "x", Description: d, Metrics: m, New: n}},
		{{Name: "x", Description: d, Metrics: m, Enabled: always}},
		{{Description: d, Metrics: m, Enabled: always, New: n}},
		{cpuEntry, cpuEntry},
	} {
		if len(problems(bad)) == 0 {
			t.Errorf("incomplete list %+v passed", bad)
		}
	}
}
