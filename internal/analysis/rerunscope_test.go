package analysis

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// checkRuns applies a scope's --set to the study s, as the rerun command
// does, and checks that the study then runs exactly the cells want, all
// of which the scope holds.
func checkRuns(t *testing.T, s *study.Study, sc Scope, want ...results.Cell) {
	t.Helper()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, kv := range sc.Sets {
		set = append(set, kv[0]+"="+kv[1])
	}
	cat := study.Catalog{Datapaths: []string{"bridge", "flannel-vxlan", "calico-vxlan", "cilium"}, Tools: testCatalog.Tools}
	re, err := study.Parse("s.yaml", b, study.Options{Set: set}, cat)
	if err != nil {
		t.Fatalf("the rerun's study: %v", err)
	}
	got := re.Cells()
	slices.SortFunc(got, cmpCell)
	slices.SortFunc(want, cmpCell)
	if !slices.Equal(got, want) {
		t.Errorf("the rerun runs %v, want %v", got, want)
	}
	for _, c := range want {
		if !sc.Has(c) {
			t.Errorf("the scope does not hold %v", c)
		}
	}
}

func cmpCell(a, b results.Cell) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }

// A rerun to decide a run's undecided cells narrows each list of the
// study to what they and the cells they were compared with need, picks
// the study's own entries by name (a swept workload by its entry), says
// nothing of entries that never ran, and is costed on the cells it runs.
func TestRerunScope(t *testing.T) {
	parse := func(text string) *study.Study {
		t.Helper()
		cat := study.Catalog{Datapaths: []string{"bridge", "flannel-vxlan", "calico-vxlan", "cilium"}, Tools: testCatalog.Tools}
		s, err := study.Parse("s.yaml", []byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n"+text), study.Options{}, cat)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stop := func(c results.Cell, versus string, toDecide int) results.Stop {
		st := results.Stop{Cell: c, N: 3, TrialSeconds: 10, Versus: versus}
		switch {
		case toDecide > 0:
			st.Decision, st.ToDecide = "undecided", toDecide
		case versus != "":
			st.Decision = "better"
		}
		return st
	}

	// Datapaths against the first: one of three undecided, one datapath
	// skipped by the machine (no stops).
	dps := parse(`  datapaths: [{name: flannel, type: flannel-vxlan}, bridge, calico-vxlan, cilium]
  workloads: [{name: http, tool: ab, concurrency: [1, 8]}]
  trials: 3
  duration: 5s
`)
	cell := func(dp, w string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1}
	}
	var stops []results.Stop
	for _, w := range []string{"http@c1", "http@c8"} {
		stops = append(stops, stop(cell("flannel", w), "", 0), stop(cell("bridge", w), "flannel", 0))
	}
	stops = append(stops, stop(cell("calico-vxlan", "http@c1"), "flannel", 0), stop(cell("calico-vxlan", "http@c8"), "flannel", 9))
	sc := RerunScope(stops, dps)
	// The list of workloads names entries, so the undecided variant is
	// picked (spec.only): the cells compared with it come with it.
	if want := [][2]string{{"datapaths", "[flannel, calico-vxlan]"}, {"only", "[{workload: http@c8}]"}}; !reflect.DeepEqual(sc.Sets, want) {
		t.Errorf("datapaths: sets %v, want %v", sc.Sets, want)
	}
	if sc.Has(cell("calico-vxlan", "http@c1")) || sc.Has(cell("bridge", "http@c8")) || !sc.Has(cell("flannel", "http@c8")) || !sc.Has(cell("calico-vxlan", "http@c8")) {
		t.Error("datapaths: the scope holds the wrong cells")
	}
	checkRuns(t, dps, sc, cell("flannel", "http@c8"), cell("calico-vxlan", "http@c8"))
	// Fixed design at 9: flannel and calico-vxlan at concurrency 8, not
	// bridge, not concurrency 1.
	r, ok := RerunToDecide(stops, true, sc.Has)
	if !ok || r.Options[0].Time != 2*9*10*time.Second || r.ThisRun != 6*3*10*time.Second {
		t.Errorf("datapaths: rerun %+v, want 3m0s of 2 cells at 9 trials beside this run's 3m0s", r)
	}

	// Tunings and replica counts: rps undecided at 1 replica only.
	tun := parse(`  datapaths: [bridge]
  tunings: [baseline, rps, rfs]
  workloads: [{name: tcp, tool: iperf3}, {name: rr, tool: qperf, messageSize: 1}]
  replicas: [1, 4]
  trials: {min: 3, max: 6}
  duration: 5s
`)
	stops = nil
	for _, w := range []string{"tcp", "rr"} {
		for _, reps := range []int{1, 4} {
			for _, tn := range []string{"baseline", "rps", "rfs"} {
				c := results.Cell{Datapath: "bridge", Tuning: tn, Workload: w, Replicas: reps}
				switch {
				case tn == "baseline":
					stops = append(stops, stop(c, "", 0))
				case tn == "rps" && reps == 1 && w == "tcp":
					stops = append(stops, stop(c, "baseline", 12))
				default:
					stops = append(stops, stop(c, "baseline", 0))
				}
			}
		}
	}
	sc = RerunScope(stops, tun)
	want := [][2]string{{"workloads", "[tcp]"}, {"tunings", "[baseline, rps]"}, {"replicas", "[1]"}}
	if !reflect.DeepEqual(sc.Sets, want) {
		t.Errorf("tunings: sets %v, want %v", sc.Sets, want)
	}
	// Undecided across the lists (rps at 1 replica, rfs at 4): the
	// lists' product would rerun rps at 4 and rfs at 1 too; the two
	// cells are picked, and their baselines come with them.
	for i := range stops {
		if stops[i].Cell.Tuning == "rfs" && stops[i].Cell.Replicas == 4 && stops[i].Cell.Workload == "tcp" {
			stops[i].Decision, stops[i].ToDecide = "undecided", 8
		}
	}
	sc = RerunScope(stops, tun)
	want = [][2]string{{"workloads", "[tcp]"}, {"only", "[{tuning: rps, replicas: 1}, {tuning: rfs, replicas: 4}]"}}
	if !reflect.DeepEqual(sc.Sets, want) {
		t.Errorf("tunings across replicas: sets %v, want %v", sc.Sets, want)
	}
	tc := func(tn string, reps int) results.Cell {
		return results.Cell{Datapath: "bridge", Tuning: tn, Workload: "tcp", Replicas: reps}
	}
	checkRuns(t, tun, sc, tc("baseline", 1), tc("rps", 1), tc("baseline", 4), tc("rfs", 4))
	// Every tuning undecided at 1 replica, and rfs at 4: one selector
	// picks the first row, one the rfs column; rps at 4 stays out.
	for i := range stops {
		if stops[i].Cell == tc("rfs", 1) {
			stops[i].Decision, stops[i].ToDecide = "undecided", 8
		}
	}
	sc = RerunScope(stops, tun)
	want = [][2]string{{"workloads", "[tcp]"}, {"only", "[{replicas: 1}, {tuning: rfs}]"}}
	if !reflect.DeepEqual(sc.Sets, want) {
		t.Errorf("a row and a column: sets %v, want %v", sc.Sets, want)
	}
	checkRuns(t, tun, sc, tc("baseline", 1), tc("rps", 1), tc("rfs", 1), tc("baseline", 4), tc("rfs", 4))
	// A rerun of that run: rfs at 1 pair decided, rps at 1 and rfs at 4
	// still undecided. The new selectors replace the run's own, so they
	// must not pick what the run's left out either: {tuning: rps} would
	// pick rps at 4, which the run never planned.
	picked := parse(`  datapaths: [bridge]
  tunings: [baseline, rps, rfs]
  workloads: [{name: tcp, tool: iperf3}, {name: rr, tool: qperf, messageSize: 1}]
  replicas: [1, 4]
  trials: {min: 3, max: 6}
  duration: 5s
  only: [{workload: tcp, replicas: 1}, {workload: tcp, tuning: rfs}]
`)
	var again []results.Stop
	for _, c := range picked.Cells() {
		switch {
		case c.Tuning == "baseline":
			again = append(again, stop(c, "", 0))
		case c == tc("rfs", 1):
			again = append(again, stop(c, "baseline", 0))
		default:
			again = append(again, stop(c, "baseline", 8))
		}
	}
	sc = RerunScope(again, picked)
	// The workload the run left out is narrowed away too.
	want = [][2]string{{"workloads", "[tcp]"}, {"only", "[{tuning: rps, replicas: 1}, {tuning: rfs, replicas: 4}]"}}
	if !reflect.DeepEqual(sc.Sets, want) {
		t.Errorf("a picked run: sets %v, want %v", sc.Sets, want)
	}
	checkRuns(t, picked, sc, tc("baseline", 1), tc("rps", 1), tc("baseline", 4), tc("rfs", 4))
	for i := range stops {
		if stops[i].Cell == tc("rfs", 4) || stops[i].Cell == tc("rfs", 1) {
			stops[i].Decision, stops[i].ToDecide = "better", 0
		}
	}

	// Nothing undecided: no narrowing.
	decided := slices.Clone(stops)
	for i := range decided {
		if decided[i].Decision == "undecided" {
			decided[i].Decision = "worse"
		}
	}
	if sc := RerunScope(decided, tun); len(sc.Sets) != 0 || !sc.Has(stops[5].Cell) {
		t.Errorf("a run without undecided cells narrowed to %v", sc.Sets)
	}

	// Impairments: the unimpaired cells are the study's "none".
	imp := parse(`  datapaths: [{name: flannel, type: flannel-vxlan}, bridge]
  impairments: [none, loss-low, delay-low]
  workloads: [{name: tcp, tool: iperf3}]
  trials: 3
  duration: 5s
`)
	stops = nil
	for _, m := range []string{"", "loss-low", "delay-low"} {
		c := results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "tcp", Replicas: 1, Impairment: m}
		b := c
		b.Datapath = "bridge"
		toDecide := 0
		if m == "" {
			toDecide = 5
		}
		stops = append(stops, stop(c, "", 0), stop(b, "flannel", toDecide))
	}
	if sc := RerunScope(stops, imp); !reflect.DeepEqual(sc.Sets, [][2]string{{"impairments", "[none]"}}) {
		t.Errorf("impairments: sets %v", sc.Sets)
	}
}

// Picks selects a finding's cells in every entry of the dimensions an
// A/B replaces, and nothing when the lists pick them alone.
func TestPicks(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"bridge", "flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge, flannel-vxlan]
  tunings: [baseline, rps]
  workloads: [{name: tcp, tool: iperf3}, {name: http, tool: ab, concurrency: [1, 8]}]
  replicas: [1, 4]
  trials: 3
  duration: 5s
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var stops []results.Stop
	for _, c := range s.Cells() {
		stops = append(stops, results.Stop{Cell: c})
	}
	c := func(dp, w string, reps int) results.Cell {
		return results.Cell{Datapath: dp, Tuning: "rps", Workload: w, Replicas: reps}
	}
	for _, tc := range []struct {
		cells []results.Cell
		free  []string
		want  string
	}{
		{[]results.Cell{c("bridge", "http@c8", 1)}, []string{"tuning"}, "[{workload: http@c8}]"},
		{[]results.Cell{c("bridge", "tcp", 1)}, []string{"tuning"}, ""},
		{[]results.Cell{c("bridge", "tcp", 1), c("flannel-vxlan", "tcp", 4)}, []string{"tuning"}, "[{datapath: bridge, replicas: 1}, {datapath: flannel-vxlan, replicas: 4}]"},
		{[]results.Cell{c("bridge", "tcp", 1), c("flannel-vxlan", "tcp", 4)}, []string{"tuning", "datapath"}, ""},
		{[]results.Cell{c("bridge", "tcp", 1), c("flannel-vxlan", "tcp", 1), c("bridge", "tcp", 4)}, []string{"tuning", "datapath"}, ""},
	} {
		if got := Picks(tc.cells, stops, s, tc.free...); got != tc.want {
			t.Errorf("Picks(%v, free %v) = %q, want %q", tc.cells, tc.free, got, tc.want)
		}
	}
}
