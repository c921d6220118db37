package app

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/prove"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestProveOnRunCells: with --run, a candidate that answers a finding of
// the run is proved on the run's own study narrowed to the cells the
// finding showed in (its datapath, workload and replica count; the
// tunings are the candidate's A and B), the user's --set after the
// narrowing; a candidate that answers nothing keeps the built-in A/B.
func TestProveOnRunCells(t *testing.T) {
	fr := twoDatapathRun(t)
	dir := fr.dir
	rules, err := advise.Lookup("rfs")
	if err != nil {
		t.Fatal(err)
	}
	bound := results.Cell{Datapath: "calico-routed", Tuning: "baseline", Workload: "tcp", Replicas: 4}
	e := &advise.Entry{Result: advise.Result{Name: "rfs", Rule: rules[0]}, Seen: []advise.Sighting{{Finding: advise.FindingOneCore, Run: dir, Cells: []results.Cell{bound}}}}
	f := adviseFlags{sets: []string{"duration=5s"}}
	opt := prove.Options{Resolve: f.resolver(), Sets: f.sets, Budget: time.Minute}
	o := fr.options(opt, e)
	abs, _ := filepath.Abs(filepath.Join(dir, results.StudyFile))
	if want := []string{"datapaths=[calico-routed]", "workloads=[tcp]", "replicas=[4]", "trials={min: 3, max: 8}", "duration=5s"}; o.Study != abs || !slices.Equal(o.Sets, want) ||
		!strings.Contains(o.Shape, "narrowed to the cells where it showed one-core") {
		t.Fatalf("options %q %q %q, want the run's study with %q", o.Study, o.Sets, o.Shape, want)
	}
	s, _, err := prove.Plan(o, e, &inspect.Inspection{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Datapaths) != 1 || s.Spec.Datapaths[0].MTU != 1400 || len(s.Spec.Workloads) != 1 || s.Spec.Workloads[0].Name != "tcp" ||
		!slices.Equal(s.Spec.Replicas, []int{4}) || s.Spec.Duration.Seconds() != 5 || len(s.Spec.Tunings) != 2 || s.Spec.Tunings[1].Name != "rfs-underlay" ||
		s.Spec.Trials != (study.Trials{Min: 3, Max: 8}) || s.Spec.Budget.Duration != time.Minute {
		t.Errorf("A/B study %+v: want the run's calico-routed (MTU 1400), tcp at 4 replicas, 5 s, 3 to 8 trials within the budget, the candidate's two tunings", s.Spec)
	}
	// A finding in two cells that differ in every dimension: the lists'
	// product holds eight, the A/B picks the two, each in A and B.
	other := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "rr", Replicas: 1}
	e.Seen[0].Cells = []results.Cell{bound, other}
	o = fr.options(opt, e)
	if want := "only=[{datapath: calico-routed, workload: tcp, replicas: 4}, {datapath: bridge, workload: rr, replicas: 1}]"; !slices.Contains(o.Sets, want) {
		t.Errorf("sets %q, want %q among them", o.Sets, want)
	}
	if s, _, err := prove.Plan(o, e, &inspect.Inspection{}); err != nil || len(s.Cells()) != 4 {
		t.Errorf("A/B of two cells: %v, cells %v; want those two in A and B", err, s.Cells())
	}
	// The user's --set may leave a selector without its entry: the
	// lists alone then.
	user := opt
	user.Sets = []string{"replicas=[1]"}
	if o := fr.options(user, e); slices.ContainsFunc(o.Sets, func(s string) bool { return strings.HasPrefix(s, "only=") }) {
		t.Errorf("sets %q: selectors of a replica count the user's --set removed", o.Sets)
	}
	e.Seen[0].Cells = []results.Cell{bound}
	// A candidate that answers no finding keeps the built-in A/B, as
	// does every candidate without --run.
	plain := &advise.Entry{Result: advise.Result{Name: "rfs", Rule: rules[0]}}
	if o := fr.options(opt, plain); o.Study != "" || o.Shape != "" {
		t.Errorf("a candidate without findings: %+v", o)
	}
	if o := (fromRun{}).options(opt, e); o.Study != "" {
		t.Errorf("without --run: %+v", o)
	}
}

// A run of spec.only (a rerun of undecided cells) names its own tunings
// in its selectors; the candidate's A and B replace those tunings, so
// the A/B drops the selectors and narrows by the lists alone.
func TestProveOnPickedRun(t *testing.T) {
	bound := results.Cell{Datapath: "bridge", Tuning: "rps", Workload: "tcp", Replicas: 4}
	base := bound
	base.Tuning = "baseline"
	dir, run := writeStudyRun(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: mine}
spec:
  datapaths: [bridge]
  tunings: [baseline, rps]
  workloads: [{name: tcp, tool: iperf3}]
  replicas: [1, 4]
  trials: 8
  duration: 20s
  only: [{tuning: rps, replicas: 4}]
`, []results.Stop{{Cell: base, Metric: results.MetricBitrate}, {Cell: bound, Metric: results.MetricBitrate}})
	rules, err := advise.Lookup("rfs")
	if err != nil {
		t.Fatal(err)
	}
	e := &advise.Entry{Result: advise.Result{Name: "rfs", Rule: rules[0]}, Seen: []advise.Sighting{{Finding: advise.FindingOneCore, Run: dir, Cells: []results.Cell{bound}}}}
	f := adviseFlags{}
	o := fromRun{dir: dir, run: run, study: runStudy(dir)}.options(prove.Options{Resolve: f.resolver(), Budget: time.Minute}, e)
	s, _, err := prove.Plan(o, e, &inspect.Inspection{})
	if err != nil {
		t.Fatalf("the A/B on a picked run: %v (sets %q)", err, o.Sets)
	}
	if len(s.Spec.Only) != 0 || !slices.Equal(s.Spec.Replicas, []int{4}) || len(s.Cells()) != 2 {
		t.Errorf("A/B study: only %v, replicas %v, %d cells; want no selectors, 4 replicas, A and B", s.Spec.Only, s.Spec.Replicas, len(s.Cells()))
	}
}

// writeStudyRun writes a run directory of studyYAML with stops and reads it
// back.
func writeStudyRun(t *testing.T, studyYAML string, stops []results.Stop) (string, *results.Run) {
	t.Helper()
	dir := writeRunDir(t, studyYAML, nil, stops)
	run, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, run
}

// twoDatapathRun is a run of bridge and calico-routed, tcp and rr, at 1
// and 4 pairs.
func twoDatapathRun(t *testing.T) fromRun {
	var stops []results.Stop
	for _, dp := range []string{"bridge", "calico-routed"} {
		for _, wl := range []string{"tcp", "rr"} {
			for _, r := range []int{1, 4} {
				stops = append(stops, results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: wl, Replicas: r}, Metric: results.MetricBitrate})
			}
		}
	}
	dir, run := writeStudyRun(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: mine}
spec:
  datapaths: [bridge, {name: calico-routed, type: calico-routed, mtu: 1400}]
  workloads: [{name: tcp, tool: iperf3}, {name: rr, tool: sockperf}]
  replicas: [1, 4]
  trials: 8
  duration: 20s
`, stops)
	return fromRun{dir: dir, run: run, study: runStudy(dir)}
}

// With --run, --set may name the run's own entries (its findings'
// candidates are measured on its study) or the built-in A/B's; one that
// fits neither is bad input naming both.
func TestAdviseSetsForTheRunsStudy(t *testing.T) {
	fr := twoDatapathRun(t)
	for _, c := range []struct {
		sets []string
		err  string
	}{
		{[]string{"workloads.rr.messageSize=64"}, ""},
		{[]string{"replicas=[1]"}, ""},
		{[]string{"workloads.nope.length=1M"}, "fits neither the run's study"},
	} {
		f := adviseFlags{sets: c.sets, fromRun: fr.dir}
		err := f.checkSets(prove.Options{Resolve: f.resolver()}, fr)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("--set %v: %v, want %q", c.sets, err, c.err)
		}
	}
	// Without --run the built-in A/B alone decides.
	f := adviseFlags{sets: []string{"workloads.rr.messageSize=64"}}
	if err := f.checkSets(prove.Options{Resolve: f.resolver()}, fromRun{}); err == nil {
		t.Error("a --set naming a workload the built-in A/B lacks passed without --run")
	}
}
