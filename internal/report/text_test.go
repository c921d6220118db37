package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

func TestComparability(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   results.Run
		want  []string
		avoid []string
	}{
		{"no env", results.Run{}, []string{"env.json is missing"}, []string{"labelled with the node"}},
		{"shared", results.Run{HasEnv: true, Env: results.Env{CPUs: 8, NodeCPUs: map[string][]int{"server": nil, "client": {}}}},
			[]string{"share all 8 CPUs", "whole machine"}, []string{"labelled with the node"}},
		{"disjoint", results.Run{HasEnv: true, Env: results.Env{NodeCPUs: map[string][]int{"server": {1, 0}, "client": {2, 3}}}},
			[]string{"client: 2-3; server: 0-1 (disjoint)", "labelled with the node"}, nil},
		{"overlap", results.Run{HasEnv: true, Env: results.Env{NodeCPUs: map[string][]int{"server": {0, 1, 2}, "client": {1, 2, 3}}}},
			[]string{"(CPUs 1-2 are shared)"}, nil},
		{"kube", results.Run{HasEnv: true, Env: results.Env{Engine: "kube", NodeCPUs: map[string][]int{"server": {0, 1}}}},
			[]string{"as the papers measured theirs", "the server node's CPUs (server: 0-1)"}, []string{"one kernel"}},
		{"kube on one kernel", results.Run{HasEnv: true, Env: results.Env{Engine: "kube", SharedKernel: true, NodeCPUs: map[string][]int{"server": {0, 1}}}},
			[]string{"report one boot ID", "that machine's CPUs (server: 0-1), with both nodes' work", "not comparable with the papers"},
			[]string{"as the papers measured theirs"}},
	} {
		text := strings.Join(comparability(&tc.run, &study.Study{}), "\n")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: lacks %q in:\n%s", tc.name, w, text)
			}
		}
		for _, a := range tc.avoid {
			if strings.Contains(text, a) {
				t.Errorf("%s: should not say %q", tc.name, a)
			}
		}
	}
}

// Workloads that pin their ends (nic-modes' numa-same and numa-other)
// are pinned though the nodes share every CPU: the report says so and
// not that the study pins none.
func TestComparabilityNamesPinnedWorkloads(t *testing.T) {
	run := results.Run{HasEnv: true, Env: results.Env{CPUs: 2, NodeCPUs: map[string][]int{"server": nil, "client": nil}}}
	s := &study.Study{}
	s.Spec.Workloads = []study.Workload{{Name: "tcp"}, {Name: "numa-same", Pin: &study.Pin{Server: "same-numa", Client: "same-numa"}}}
	text := strings.Join(comparability(&run, s), "\n")
	if strings.Contains(text, "pins none") || !strings.Contains(text, "the workloads numa-same pin their servers and clients") {
		t.Errorf("pinned workload not named:\n%s", text)
	}
}

// The Comparability section is worded from the study, not rps-rfs's
// text on every one: the paper's set-up of the seed its source names,
// what the study varies (tunings, datapaths) as what compares within the
// run, and on a link the study shapes (flannel-backends' 1 Gbit/s, whose
// references are absolute Mbit/s) absolute bitrates where the link bounds
// them. A study citing no known paper gets no set-up.
func TestComparabilityWordsTheStudy(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: testCatalog.Tools}
	load := func(name string) *study.Study {
		t.Helper()
		s, err := study.Resolve(name, study.Options{Profile: "quick"}, cat)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	user := load("rps-rfs")
	user.Metadata.Source, user.Spec.Tunings = "", user.Spec.Tunings[:1]
	run := results.Run{HasEnv: true, Env: results.Env{CPUs: 4, NodeCPUs: map[string][]int{"server": nil, "client": nil}}}
	for _, tc := range []struct {
		name        string
		s           *study.Study
		want, avoid []string
	}{
		{"flannel-backends", load("flannel-backends"),
			[]string{"(seed 003: two nodes of the VWall testbed joined by a 1 Gbit/s link)", "each datapath against the first",
				"shaped to 1000 Mbit/s (spec.link.rate)", "Not comparable: core numbers"},
			[]string{"rps-rfs", "KVM", "server VM", "each tuning", "normalized bitrate", "Not comparable: absolute bitrates"}},
		{"rps-rfs", load("rps-rfs"),
			[]string{"(seed 000: a 4-core KVM VM per node", "normalized bitrate (each tuning against the baseline on the same machine)",
				"Not comparable: absolute bitrates"},
			[]string{"each datapath", "shaped"}},
		// Seed 001's testbed: two hosts of two 8-core CPUs each, not two
		// 8-core hosts (the paper: "two Intel Xeon E2650 CPU each with 8
		// cores (i.e., totally 16 cores)").
		{"nic-modes", load("nic-modes"),
			[]string{"(seed 001: two Linux hosts, each with two 8-core Xeon E2650 CPUs (16 cores on 2 NUMA nodes)"},
			[]string{"two 8-core Xeon hosts"}},
		{"cni-compare", load("cni-compare"),
			[]string{"(seed 004: two bare-metal CloudLab hosts, each with one 10-core Xeon E5-2640v4"},
			nil},
		{"a user's study of one tuning", user,
			[]string{"workloads, impairments and offered rates against each other"},
			[]string{"(seed", "each tuning", "each datapath"}},
	} {
		text := strings.Join(comparability(&run, tc.s), "\n")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: lacks %q in:\n%s", tc.name, w, text)
			}
		}
		for _, a := range tc.avoid {
			if strings.Contains(text, a) {
				t.Errorf("%s: says %q in:\n%s", tc.name, a, text)
			}
		}
	}
	// A cluster run words its comparison from the study too.
	kube := results.Run{HasEnv: true, Env: results.Env{Engine: "kube"}}
	if text := strings.Join(comparability(&kube, load("flannel-backends")), "\n"); strings.Contains(text, "each tuning") {
		t.Errorf("kube flannel-backends: %s", text)
	}
}

func TestCPULabeler(t *testing.T) {
	env := results.Env{NodeCPUs: map[string][]int{"server": {0, 1}, "client": {1}}}
	l := cpuLabeler(env, 4)
	if got := l(1); got != "1\nclient+server" {
		t.Errorf("label(1) = %q", got)
	}
	if got := l(3); got != "3" {
		t.Errorf("label(3) = %q", got)
	}
	if got := cpuLabeler(env, 64)(0); got != "0" {
		t.Errorf("wide machine label = %q, want the number only", got)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.95, 1.21, "0.95 1.00 1.05 1.10 1.15 1.20"},
		{0, 100, "0 20 40 60 80 100"},
		{0.8, 1.3, "0.8 0.9 1.0 1.1 1.2 1.3"},
		{0.9, 1.02, "0.90 0.92 0.94 0.96 0.98 1.00 1.02"},
		{0.9, 1.05, "0.900 0.925 0.950 0.975 1.000 1.025 1.050"},
	} {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("ticks(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestMethodPlannedTrials: the method text says the planned trials as a
// count or, for an adaptive study, as its range (it printed the struct:
// "planned with {5 5} trials").
func TestMethodPlannedTrials(t *testing.T) {
	for _, tc := range []struct {
		trials study.Trials
		want   string
	}{
		{study.Fixed(5), "planned with 5 trials of 4s"},
		{study.Trials{Min: 3, Max: 20}, "planned with 3 to 20 trials (adaptive) of 4s"},
	} {
		s := &study.Study{}
		s.Spec.Trials, s.Spec.Duration.Duration = tc.trials, 4*time.Second
		if got := method(s, nil)[0]; !strings.Contains(got, tc.want) {
			t.Errorf("trials %+v: %q lacks %q", tc.trials, got, tc.want)
		}
	}
}

// TestLogTicks: a CDF from 3 to 90 ms is labelled at 5, 10, 20 and 50, a
// wider one at 1-2-5 steps of every decade, a narrow one at its ends, and
// nothing falls outside.
func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{3, 90, "5 10 20 50"},
		{0.02, 1500, "0.02 0.05 0.1 0.2 0.5 1 2 5 10 20 50 100 200 500 1000"},
		{11, 19, "11 19"},
	} {
		var labels []string
		for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("[%g, %g]: tick %g outside", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestNormalizedExplainedOnlyWithTunings: the method text and summary.md's
// header explain the normalized bitrate only when some tuning is set
// against the baseline; a study of one tuning (datapaths side by side)
// has no normalized number to explain.
func TestNormalizedExplainedOnlyWithTunings(t *testing.T) {
	row := func(tuning string) analysis.Row {
		r := dpRow("flannel", "tcp", "bitrate", 1e9)
		r.Tuning = tuning
		return r
	}
	for _, tc := range []struct {
		name  string
		rows  []analysis.Row
		wants bool
	}{
		{"one tuning", []analysis.Row{row("baseline")}, false},
		{"two tunings", []analysis.Row{row("baseline"), row("rfs")}, true},
	} {
		s := &study.Study{}
		s.Spec.Baseline, s.Spec.Trials = "baseline", study.Fixed(3)
		got := strings.Join(method(s, tc.rows), " ")
		if has := strings.Contains(got, "Normalized bitrate is"); has != tc.wants {
			t.Errorf("%s: method mentions the normalized bitrate: %v, want %v", tc.name, has, tc.wants)
		}
		n := newNumbers(analysis.Model{Study: "x", Baseline: "baseline", Rows: tc.rows})
		var b strings.Builder
		n.markdownHeader(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, s, nil)
		if has := strings.Contains(b.String(), "Normalized bitrate (transactions or requests per second for request/response and HTTP workloads) ="); has != tc.wants {
			t.Errorf("%s: summary.md's header mentions the normalized bitrate: %v, want %v", tc.name, has, tc.wants)
		}
	}
}
