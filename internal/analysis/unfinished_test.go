package analysis

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A run whose design stops each cell is unfinished in the cells without
// a stop; a plain fixed design records none and is never called so.
func TestUnfinished(t *testing.T) {
	parse := func(spec string) *study.Study {
		t.Helper()
		s, err := study.Parse("s.yaml", []byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n"+spec), study.Options{}, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := parse("  datapaths: [calico-vxlan]\n  tunings: [baseline, rps]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1, 4]\n  trials: {min: 3, max: 6}\n  duration: 5s\n")
	cells := s.Cells()
	var first []results.Stop // the block at 1 pair ended, the one at 4 did not
	for _, c := range cells {
		if c.Replicas == 1 {
			first = append(first, results.Stop{Cell: c})
		}
	}
	got := Unfinished(s, &results.Run{Stops: first})
	want := slices.DeleteFunc(slices.Clone(cells), func(c results.Cell) bool { return c.Replicas == 1 })
	if !slices.Equal(got, want) {
		t.Errorf("one block stopped: unfinished %v, want %v", got, want)
	}
	if got := Unfinished(s, &results.Run{}); !slices.Equal(got, cells) {
		t.Errorf("no stops: unfinished %v, want every cell", got)
	}
	var all []results.Stop
	for _, c := range cells {
		all = append(all, results.Stop{Cell: c})
	}
	if got := Unfinished(s, &results.Run{Stops: all}); len(got) != 0 {
		t.Errorf("every cell stopped: unfinished %v", got)
	}
	// A plain fixed design records no stops: a cell short of its trials
	// and not given up is unfinished, a whole one or one given up is not.
	plain := parse("  datapaths: [calico-vxlan]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1, 4]\n  trials: 3\n  duration: 5s\n")
	pc := plain.Cells()
	run := &results.Run{}
	for trial := 1; trial <= 3; trial++ {
		run.Samples = append(run.Samples, results.Sample{Cell: pc[0], Trial: trial})
	}
	run.Samples = append(run.Samples, results.Sample{Cell: pc[1], Trial: 1})
	if got := Unfinished(plain, run); len(got) != 1 || got[0] != pc[1] {
		t.Errorf("a fixed design cut short: unfinished %v, want %v", got, pc[1])
	}
	for a := 0; a <= study.MaxRetries; a++ {
		run.Marked = append(run.Marked, results.Sample{Cell: pc[1], Trial: 2, Error: "iperf3: connection refused"})
	}
	if got := Unfinished(plain, run); len(got) != 0 {
		t.Errorf("a fixed design whose short cell was given up: unfinished %v", got)
	}
	if why := GaveUp(run)[pc[1]]; why == "" {
		t.Errorf("GaveUp %v, want the cell given up at trial 2", GaveUp(run))
	}
}

// A cell given up at its set-up (results.SetUpFailed: its datapath's
// cluster, or its replica count's pods, could not be set up) has one
// record, at the trial it was to run: it is given up with that record's
// why, whatever its failed attempts count, and a plain fixed design's
// cell given up so is not unfinished. A failed attempt or two without
// it leave the cell as it was.
func TestGaveUpAtSetUp(t *testing.T) {
	s, err := study.Parse("s.yaml", []byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n"+
		"  datapaths: [calico-vxlan]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1, 4]\n  trials: 3\n  duration: 5s\n"), study.Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	pc := s.Cells()
	why := results.GaveUpAtSetUp(2, 2, "calico-vxlan: scale to 4 pod pairs: out of memory")
	run := &results.Run{Samples: []results.Sample{{Cell: pc[1], Trial: 1}}, Marked: []results.Sample{
		{Cell: pc[1], Trial: 2, Attempt: 1, Error: "iperf3: connection refused", Discarded: "failed"},
		{Cell: pc[1], Trial: 2, Attempt: 2, Error: why, Discarded: results.SetUpFailed},
		{Cell: pc[0], Trial: 1, Attempt: 1, Error: "iperf3: connection refused", Discarded: "failed"},
	}}
	got := GaveUp(run)
	if len(got) != 1 || got[pc[1]] != why {
		t.Errorf("GaveUp = %v; want only %v, given up with %q", got, pc[1], why)
	}
	if u := Unfinished(s, run); len(u) != 1 || u[0] != pc[0] {
		t.Errorf("unfinished %v; want only %v (the cell given up at its set-up is done)", u, pc[0])
	}
}
