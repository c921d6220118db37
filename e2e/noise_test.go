package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDisturbedRunsAgainAfterTheRound: a trial the noise guard finds
// disturbed is recorded, marked, and run again after the round's other
// trials, before the next round; its repeat counts, marked, and the run's
// decisions and report say so. The guard is made to mark every attempt:
// no collector covers all of the planned window (minWindowPct 100), as a
// neighbour's steal would on a shared machine.
func TestDisturbedRunsAgainAfterTheRound(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	file := writeStudy(t, strings.Replace(fmt.Sprintf(tinyStudy, "bridge", "baseline, rps", "2s"), "trials: 1", "trials: 2", 1)+
		"  noise: {minWindowPct: 100}\n")
	r := cnibench(t, nil, "run", file, "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUntouched(t, before, "")
	b, err := os.ReadFile(filepath.Join(out, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct {
			Cell      struct{ Tuning string } `json:"cell"`
			Trial     int                     `json:"trial"`
			Attempt   int                     `json:"attempt"`
			Discarded string                  `json:"discarded"`
			Noise     struct{ Disturbed string }
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		if s.Noise.Disturbed == "" {
			t.Errorf("trial %d attempt %d of %s not marked disturbed", s.Trial, s.Attempt, s.Cell.Tuning)
		}
		mark := "counted"
		if s.Discarded != "" {
			mark = "repeated"
		}
		order = append(order, fmt.Sprintf("%s/%d/%d %s", s.Cell.Tuning, s.Trial, s.Attempt, mark))
	}
	want := []string{
		"baseline/1/1 repeated", "rps/1/1 repeated", "baseline/1/2 counted", "rps/1/2 counted",
		"baseline/2/1 repeated", "rps/2/1 repeated", "baseline/2/2 counted", "rps/2/2 counted",
	}
	if strings.Join(order, ", ") != strings.Join(want, ", ") {
		t.Errorf("attempts\n%s\nwant\n%s", strings.Join(order, ", "), strings.Join(want, ", "))
	}
	if !strings.Contains(r.stderr+r.stdout, "repeating it after the round's other trials") ||
		!strings.Contains(r.stderr+r.stdout, "2 of its 2 trials and 2 of baseline's 2 counted though disturbed") {
		t.Errorf("the run does not say it repeats later, or that its decision rests on disturbed trials:\n%s\n%s", r.stdout, r.stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(n=2, disturbed)") || !strings.Contains(string(md), "## Marked trials") {
		t.Errorf("summary.md lacks the glance's mark or the marked trials")
	}
}
