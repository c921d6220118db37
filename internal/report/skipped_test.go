package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// A datapath the machine could not build (spec.skipUnavailable) is in no
// table and not in the run's study.yaml: summary.md lists it under "Not
// run here" with the reason and summary.json under "skipped", as
// env.json's notes and report.html did alone before.
func TestSummaryNamesSkippedDatapaths(t *testing.T) {
	dir, _ := syntheticDir(t)
	envPath := filepath.Join(dir, results.EnvFile)
	var env map[string]any
	if err := json.Unmarshal([]byte(readFile(t, envPath)), &env); err != nil {
		t.Fatal(err)
	}
	env["notes"] = append(env["notes"].([]any),
		"datapaths ovs, weave skipped: kernel feature openvswitch is not available",
		"datapath calico-ipip skipped: kernel feature ipip is not available")
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(envPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	want := "## Not run here\n\n" +
		"- `ovs`: kernel feature openvswitch is not available\n" +
		"- `weave`: kernel feature openvswitch is not available\n" +
		"- `calico-ipip`: kernel feature ipip is not available\n\n" +
		"The study asked for these datapaths; this machine could not build them (spec.skipUnavailable), so no table below has them.\n"
	if !strings.Contains(md, want) {
		t.Errorf("summary.md lacks\n%s\nin:\n%s", want, md)
	}
	var doc struct {
		Version int               `json:"version"`
		Skipped []results.Skipped `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, analysis.SummaryJSON))), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Skipped) != 3 || doc.Skipped[2] != (results.Skipped{Datapath: "calico-ipip", Reason: "kernel feature ipip is not available"}) {
		t.Errorf("summary.json skipped = %+v", doc.Skipped)
	}
	if doc.Version != analysis.ModelVersion {
		t.Errorf("summary.json version %d", doc.Version)
	}

	// A run that skipped none has no such section.
	clean, _ := syntheticDir(t)
	if err := Build(clean); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(clean, results.SummaryMD)); strings.Contains(md, "Not run here") {
		t.Errorf("summary.md of a run that skipped nothing has a \"Not run here\" section")
	}
}
