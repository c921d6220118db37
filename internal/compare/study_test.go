package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

const studyA = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
    name: gate
spec:
    nodes:
        underlayMTU: 1500
    datapaths:
        - bridge
        - name: flannel-vxlan
          mtu: 1450
    tunings: [baseline, rfs]
    workloads:
        - name: tcp
          tool: iperf3
          length: 128K
        - name: udp
          tool: iperf3
    replicas: [1, 4]
    trials: {min: 3, max: 10}
    precision: {halfWidth: 2%, of: mean}
    budget: 10m
    duration: 10s
    warmup: 2s
`

// TestStudyDifferences: two runs' study.yaml differ in what their
// common cells measure (name, duration, a workload's and a datapath's
// settings, the nodes, a field added later) and in what does not (trials,
// precision, budget, replicas, entries only one run has, a bare name
// for {name: NAME}); only the first are listed, each with both values.
func TestStudyDifferences(t *testing.T) {
	b := strings.NewReplacer(
		"name: gate", "name: gate-pr",
		"underlayMTU: 1500", "underlayMTU: 9000",
		"- bridge", "- name: bridge",
		"mtu: 1450", "mtu: 1400",
		"tunings: [baseline, rfs]", "tunings: [baseline, rps]",
		"length: 128K", "length: 64K",
		"- name: udp\n          tool: iperf3", "- name: http\n          tool: ab",
		"replicas: [1, 4]", "replicas: [1]",
		"trials: {min: 3, max: 10}", "trials: 5",
		"precision: {halfWidth: 2%, of: mean}", "precision: {halfWidth: 5%, of: mean}",
		"budget: 10m", "budget: 1h",
		"duration: 10s", "duration: 30s\n    futureField: [1, 2]",
	).Replace(studyA)
	got := StudyDifferences([]byte(studyA), []byte(b))
	want := []string{
		"study gate / gate-pr",
		"study datapath flannel-vxlan mtu 1450 / 1400",
		"study duration 10s / 30s",
		"study futureField (none) / [1,2]",
		"study nodes underlayMTU 1500 / 9000",
		"study workload tcp length 128K / 64K",
	}
	if !slices.Equal(got, want) {
		t.Errorf("differences\n  %q\nwant\n  %q", got, want)
	}
	if got := StudyDifferences([]byte(studyA), []byte(studyA)); len(got) != 0 {
		t.Errorf("one study differs from itself in %q", got)
	}
	// The page lists them where it lists the environments' differences.
	h := NewHead("a", "b", &results.Run{Study: []byte(studyA)}, &results.Run{Study: []byte(b)}, nil, nil, false)
	if !slices.Equal(h.Differ, want) {
		t.Errorf("head's differences %q", h.Differ)
	}
}

// TestWarnings: what the page says above and after its table, one line
// each, for the formats without a place for it.
func TestWarnings(t *testing.T) {
	h := Head{A: "runs/a", B: "runs/b", UnfinishedB: 1, CellsB: 2, Same: true, Differ: []string{"study duration 10s / 30s"},
		Bound: []Bound{{Key: "bridge/baseline/tcp/r=1", Node: "server", ABound: true}}, HoldsA: "datapaths bridge", HoldsB: "datapaths ovs"}
	got := strings.Join(Warnings(h, nil), "\n")
	for _, want := range []string{
		"B did not finish: 1 of its 2 cells were not done when it ended",
		"A and B are the same run directory",
		"The runs differ in: study duration 10s / 30s",
		"no cell and metric appear in both runs: A = runs/a: datapaths bridge; B = runs/b: datapaths ovs",
		"bound by one core in A or B, so a ratio may compare one core's limit with another (docs/statistics.md, \"Bound by one core\"): " +
			"bridge/baseline/tcp/r=1 (server node: A bound, B not bound)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 4 {
		t.Errorf("want 5 lines:\n%s", got)
	}
}
