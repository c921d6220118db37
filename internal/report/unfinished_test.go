package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A run that ended before its blocks did (no stop for some cells) says
// so first on its pages, with how to continue it, and offers no rerun;
// once every cell has its stop it is finished and says nothing of it.
func TestUnfinishedRun(t *testing.T) {
	dir, _ := syntheticDir(t)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	for _, want := range []string{
		"**Warning: this run did not finish: it ended (interrupted, killed or stopped by an error) before 15 of its 15 cells were done",
		"Continue it where it stopped, after cnibench cleanup if it was killed: `cnibench run --resume` on this directory.**",
		`Their tables below say "missing"; the run ended before it measured them (above).`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if page := readFile(t, filepath.Join(dir, results.ReportHTML)); !strings.Contains(page, "<p>Warning: this run did not finish: ") {
		t.Error("report.html does not say the run did not finish")
	} else if !strings.Contains(page, "<code>cnibench run --resume</code> on this directory") || strings.Contains(page, "`cnibench run --resume`") {
		t.Error("report.html does not show the command to resume as code")
	}
	var js struct {
		Unfinished []results.Cell `json:"unfinished"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &js); err != nil || len(js.Unfinished) != 15 {
		t.Errorf("summary.json: %d unfinished cells (%v), want 15", len(js.Unfinished), err)
	}

	s, err := decodeStudy([]byte(readFile(t, filepath.Join(dir, results.StudyFile))))
	if err != nil {
		t.Fatal(err)
	}
	var stops []results.Stop
	for _, c := range s.Cells() {
		stops = append(stops, results.Stop{Cell: c, Metric: results.MetricBitrate, N: 3, Status: "max"})
	}
	b, err := json.Marshal(stops)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.StopsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md = readFile(t, filepath.Join(dir, results.SummaryMD))
	if strings.Contains(md, "did not finish") || !strings.Contains(md, `Their tables below say "missing"; the "Repetitions and decisions" table says why.`) {
		t.Errorf("a finished run's summary.md:\n%s", md[:min(len(md), 2000)])
	}
}
