package analysis

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// A rerun runs each estimated undecided cell to its estimate, its
// baseline as long as its longest such cell, and the rest as this run
// did, at each cell's own trial time; a study of datapaths pairs with the
// first datapath's cell.
func TestRerunToDecide(t *testing.T) {
	cell := func(dp, tuning string) results.Cell {
		return results.Cell{Datapath: dp, Workload: "tcp", Tuning: tuning, Replicas: 1}
	}
	stops := []results.Stop{
		{Cell: cell("bridge", "baseline"), N: 10, TrialSeconds: 5},
		{Cell: cell("bridge", "rps"), N: 5, TrialSeconds: 6, Decision: "undecided", ToDecide: 40, Versus: "baseline"},
		{Cell: cell("bridge", "rps+"), N: 5, TrialSeconds: 6, Decision: "undecided", ToDecide: 25, Versus: "baseline"},
		{Cell: cell("bridge", "rfs"), N: 3, TrialSeconds: 6, Decision: "worse", Versus: "baseline"},
		{Cell: cell("bridge", "rfs+"), N: 8, TrialSeconds: 6, Decision: "undecided", Versus: "baseline"},
	}
	r, ok := RerunToDecide(stops, false, nil)
	if !ok {
		t.Fatal("no estimate")
	}
	// At 25, rps (40) and rfs+ (none) run to 25 and the baseline with
	// them; at 40, rps+ stops at its 25.
	want := Rerun{Undecided: 3, Estimated: 2, ThisRun: (10*5 + 5*6 + 5*6 + 3*6 + 8*6) * time.Second,
		Options: []RerunOption{
			{Max: 25, Cells: 1, Time: (25*5 + 25*6 + 25*6 + 3*6 + 25*6) * time.Second},
			{Max: 40, Cells: 2, Time: (40*5 + 40*6 + 25*6 + 3*6 + 40*6) * time.Second},
		}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v, want %+v", r, want)
	}

	// A fixed design runs every cell the count it is given.
	r, _ = RerunToDecide(stops, true, nil)
	if r.Options[0] != (RerunOption{Max: 25, Cells: 1, Time: 25 * (5 + 4*6) * time.Second}) {
		t.Errorf("fixed design at 25: %+v", r.Options[0])
	}

	// Datapaths: flannel-udp against flannel-vxlan.
	dps := []results.Stop{
		{Cell: cell("flannel-vxlan", "baseline"), N: 6, TrialSeconds: 4},
		{Cell: cell("flannel-udp", "baseline"), N: 6, TrialSeconds: 4, Status: "budget", Decision: "undecided", ToDecide: 12, Versus: "flannel-vxlan"},
	}
	r, ok = RerunToDecide(dps, false, nil)
	if !ok || len(r.Options) != 1 || r.Options[0] != (RerunOption{Max: 12, Cells: 1, Time: 2 * 12 * 4 * time.Second}) {
		t.Errorf("datapaths: %+v %v", r, ok)
	}

	// Many estimates: three maxima, a third, two thirds and all of them.
	many := []results.Stop{{Cell: cell("bridge", "baseline"), N: 3, TrialSeconds: 1}}
	for i, est := range []int{50, 10, 30, 20, 40, 40} {
		many = append(many, results.Stop{Cell: cell("bridge", fmt.Sprint("t", i)), N: 3, TrialSeconds: 1,
			Decision: "undecided", ToDecide: est, Versus: "baseline"})
	}
	r, _ = RerunToDecide(many, false, nil)
	var got []string
	for _, o := range r.Options {
		got = append(got, fmt.Sprintf("%d:%d", o.Max, o.Cells))
	}
	if strings.Join(got, " ") != "20:2 40:5 50:6" {
		t.Errorf("maxima offered: %v", got)
	}

	// A maximum nearly as dear as the next, which decides more, is not
	// offered: at 40 and 41 the baseline's 20-second trials dominate.
	close := []results.Stop{{Cell: cell("bridge", "baseline"), N: 3, TrialSeconds: 20},
		{Cell: cell("bridge", "rps"), N: 3, TrialSeconds: 1, Decision: "undecided", ToDecide: 40, Versus: "baseline"},
		{Cell: cell("bridge", "rfs"), N: 3, TrialSeconds: 1, Decision: "undecided", ToDecide: 41, Versus: "baseline"}}
	if r, _ := RerunToDecide(close, false, nil); len(r.Options) != 1 || r.Options[0].Max != 41 || r.Options[0].Cells != 2 {
		t.Errorf("close maxima: %+v, want 41 alone", r.Options)
	}

	// Nothing to estimate, or a run without trial times: no line.
	if _, ok := RerunToDecide(stops[3:], false, nil); ok {
		t.Error("an estimate without an estimated cell")
	}
	old := append([]results.Stop(nil), stops...)
	old[0].TrialSeconds = 0
	if _, ok := RerunToDecide(old, false, nil); ok {
		t.Error("an estimate without the baseline's trial time")
	}
}

// The command's maximum decides the most cells at a cost of at most four
// times this run's trials or an hour; the cheapest when none costs that
// little.
func TestRerunSuggested(t *testing.T) {
	r := Rerun{ThisRun: 20 * time.Minute, Options: []RerunOption{
		{Max: 7, Cells: 6, Time: 17 * time.Minute},
		{Max: 30, Cells: 10, Time: 80 * time.Minute},
		{Max: 177, Cells: 13, Time: 7 * time.Hour},
	}}
	for _, tc := range []struct {
		this time.Duration
		want int
	}{
		{20 * time.Minute, 30},   // 80 min = 4 x 20 min
		{19 * time.Minute, 7},    // 76 min allowed: 30 costs more
		{time.Minute, 7},         // an hour allowed
		{2 * time.Hour, 177},     // 8 hours allowed
		{105 * time.Minute, 177}, // exactly 4 x 105 min = 7 h
	} {
		r.ThisRun = tc.this
		if got := r.Suggested().Max; got != tc.want {
			t.Errorf("this run %s: suggested %d, want %d", tc.this, got, tc.want)
		}
	}
	dear := Rerun{ThisRun: time.Minute, Options: []RerunOption{{Max: 50, Cells: 1, Time: 2 * time.Hour}, {Max: 90, Cells: 2, Time: 3 * time.Hour}}}
	if got := dear.Suggested().Max; got != 50 {
		t.Errorf("none within the limit: suggested %d, want the cheapest, 50", got)
	}
}

// A rerun's budget covers its trials, a fifth more and a minute of
// set-up, rounded up to whole minutes.
func TestRerunBudget(t *testing.T) {
	// 5m36s of trials, a fifth more and a minute: 7m43s, up to 8m.
	for trials, budget := range map[time.Duration]time.Duration{336 * time.Second: 8 * time.Minute, 0: time.Minute, 50 * time.Second: 2 * time.Minute} {
		if got := RerunBudget(trials); got != budget {
			t.Errorf("RerunBudget(%s) = %s, want %s", trials, got, budget)
		}
	}
}

// A cell whose baseline was given up (stops.json's versus_failed) is
// offered no rerun, whatever its estimate: more trials of it pair with
// nothing until the baseline is fixed, and the rerun would run the
// broken baseline beside it. Nor is it counted among the undecided.
func TestRerunSkipsCellsOfGivenUpBaseline(t *testing.T) {
	cell := func(tuning string) results.Cell {
		return results.Cell{Datapath: "bridge", Workload: "tcp", Tuning: tuning, Replicas: 1}
	}
	why := "its baseline bridge/tcp/baseline/r1 was given up (trial 3 failed 3 attempts; last: iperf3 died)"
	stops := []results.Stop{
		{Cell: cell("baseline"), Status: "failed", N: 3, TrialSeconds: 5, Failed: "trial 3 failed 3 attempts; last: iperf3 died"},
		{Cell: cell("rps"), Status: "failed", N: 3, TrialSeconds: 6, Decision: "undecided", ToDecide: 40, Versus: "baseline", VersusFailed: why},
	}
	if r, ok := RerunToDecide(stops, false, nil); ok {
		t.Errorf("a rerun offered for a cell of a given-up baseline: %+v", r)
	}
	stops = append(stops, results.Stop{Cell: cell("rfs"), N: 5, TrialSeconds: 6, Decision: "undecided", ToDecide: 20, Versus: "baseline"})
	if r, ok := RerunToDecide(stops, false, nil); !ok || r.Undecided != 1 || r.Options[0].Cells != 1 {
		t.Errorf("one undecided cell to rerun, got %+v %v", r, ok)
	}
}

// Cells held before a decision (stops.json's held): a rerun that runs
// one has a maximum of at least its whole hold, 8, not an unheld cell's
// estimate of 6 that would hold it only to 6 (a run whose trials.max of
// 5 cut the hold to 5); a held cell the budget stopped before its look
// is counted apart from those no count up to 1000 decides; and the
// minimum counts a held cell's hold and its baseline's trials beside it.
func TestRerunHeld(t *testing.T) {
	cell := func(tuning string, r int) results.Cell {
		return results.Cell{Datapath: "bridge", Workload: "tcp", Tuning: tuning, Replicas: r}
	}
	short := []results.Stop{
		{Cell: cell("baseline", 1), Status: "max", N: 5, TrialSeconds: 5},
		{Cell: cell("rps", 1), Status: "max", N: 5, Look: 5, TrialSeconds: 5, Decision: "undecided", ToDecide: 8, Versus: "baseline", Held: 5},
		{Cell: cell("rfs", 1), Status: "max", N: 5, Look: 5, TrialSeconds: 5, Decision: "undecided", ToDecide: 6, Versus: "baseline"},
	}
	r, ok := RerunToDecide(short, false, nil)
	if !ok || len(r.Options) != 1 || r.Options[0].Max != 8 || r.Options[0].Cells != 2 {
		t.Errorf("held cell's hold cut to 5: %+v, want one option, 8 for both", r.Options)
	}
	// Unheld, 6 is offered.
	unheld := slices.Clone(short)
	unheld[1].Held = 0
	if r, _ := RerunToDecide(unheld, false, nil); len(r.Options) != 2 || r.Options[0].Max != 6 {
		t.Errorf("unheld: %+v, want 6 and 8", r.Options)
	}

	// rps-rfs --quick on 2 cores: rps and rps+ at 1 pair held to 8, the
	// budget stopping them at 6 before their look; rfs at 1 pair
	// undecided with an estimate.
	quick := []results.Stop{
		{Cell: cell("baseline", 1), Status: "budget", N: 6, TrialSeconds: 5},
		{Cell: cell("rps", 1), Status: "budget", N: 6, TrialSeconds: 5, Decision: "undecided", Versus: "baseline", Held: 8},
		{Cell: cell("rps+", 1), Status: "budget", N: 6, TrialSeconds: 5, Decision: "undecided", Versus: "baseline", Held: 8},
		{Cell: cell("rfs", 1), Status: "budget", N: 6, Look: 6, TrialSeconds: 5, Decision: "undecided", ToDecide: 12, Versus: "baseline"},
		{Cell: cell("rfs+", 1), Status: "futile", N: 5, Look: 5, TrialSeconds: 5, Decision: "undecided", Versus: "baseline"},
		{Cell: cell("baseline", 4), Status: "target", N: 3, TrialSeconds: 5},
		{Cell: cell("rps", 4), Status: "target", N: 3, Look: 3, TrialSeconds: 5, Decision: "better", Versus: "baseline"},
	}
	r, ok = RerunToDecide(quick, false, nil)
	if !ok || r.Undecided != 4 || r.Estimated != 1 || r.NoLook != 2 {
		t.Errorf("held cells without a look: %+v %v, want 4 undecided, 1 estimated, 2 without a look", r, ok)
	}
	if r, _ := RerunToDecide(quick, true, nil); r.NoLook != 0 {
		t.Errorf("a fixed design's cells have no looks to miss: %+v", r)
	}
	want := map[results.Cell]int{cell("baseline", 1): 8, cell("rps", 1): 8, cell("rps+", 1): 8, cell("rfs", 1): 3, cell("rfs+", 1): 3,
		cell("baseline", 4): 3, cell("rps", 4): 3}
	if got := Minimums(quick, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("minimums: got %v, want %v", got, want)
	}
}
