package report

import (
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A numeric sweep's variants sit at their values on a linear axis from 0
// (1, 2, 4, 8, 16 flows were evenly spaced "P1" to "P16", hiding whether
// throughput grows in proportion), on a log axis where they span more
// than two decades; a sweep of no number keeps positions labelled with
// the variants' values.
func TestSweepAxisPlacesByValue(t *testing.T) {
	flows := study.Workload{Name: "flows", Tool: "iperf3", Parallels: []int{1, 2, 4, 8, 16}}
	a := axisOf(flows, flows.Variants())
	if !a.numeric || a.log || a.title != "parallel streams" {
		t.Fatalf("flows axis %+v", a)
	}
	var xs []float64
	for _, v := range flows.Variants() {
		x, _ := a.at(v)
		xs = append(xs, x)
	}
	if want := []float64{1, 2, 4, 8, 16}; !equalFloats(xs, want) {
		t.Errorf("flows at %v, want %v", xs, want)
	}
	p := plot.New()
	if s, err := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}, {X: 16, Y: 15}}); err == nil {
		p.Add(s)
	}
	a.apply(p)
	if p.X.Min != 0 || p.X.Max <= 16 {
		t.Errorf("flows x axis from %v to %v, want from 0 past 16", p.X.Min, p.X.Max)
	}

	sizes := study.Workload{Name: "rr", Tool: "sockperf", MessageSizes: []int{64, 1024, 65536}}
	if a := axisOf(sizes, sizes.Variants()); !a.numeric || !a.log {
		t.Errorf("64 B to 64 KiB messages: axis %+v, want logarithmic", a)
	}
	mss := study.Workload{Name: "mss", Tool: "iperf3", MSSes: []int{88, 1448}}
	if a := axisOf(mss, mss.Variants()); !a.numeric || a.log || a.title != "TCP MSS (B)" {
		t.Errorf("MSS axis %+v", a)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The sweep figures title their x axis with the swept parameter, never
// "variant", and label it with numbers, not the variants' names ("P16",
// "mss88"): across datapaths and per datapath.
func TestSweepFiguresNameTheParameter(t *testing.T) {
	for _, w := range []study.Workload{
		{Name: "flows", Tool: "iperf3", Parallels: []int{1, 2, 4, 8, 16}},
		{Name: "mss", Tool: "iperf3", MSSes: []int{88, 536, 1448}},
	} {
		s := &study.Study{Spec: study.Spec{Baseline: "baseline", Replicas: []int{1},
			Datapaths: []study.Datapath{{Name: "bridge"}, {Name: "macvlan"}}, Workloads: []study.Workload{w}}}
		var rows []analysis.Row
		for _, dp := range []string{"bridge", "macvlan"} {
			for i, v := range variantNames(w) {
				rows = append(rows, dpRow(dp, v, results.MetricBitrate, float64(i+1)*1e9))
			}
		}
		title, _, _ := analysis.SweptAxis(w)
		figs := sweepsAcrossDatapaths(s, rows)
		for _, sw := range analysis.Sweeps(s, rows) {
			d := sweepData{sw: sw, idx: analysis.Index(rows), base: w}
			figs = append(figs, sweepFigure(d, sw.Datapath+" / "+w.Name))
		}
		// The per-datapath figure's title names the parameter once:
		// "Bitrate vs TCP MSS (bridge / mss)", not "TCP MSS (B) (bridge ...".
		if want := "Bitrate vs " + analysis.SweptParam(w) + " (bridge / " + w.Name + ")"; len(figs) > 1 && figs[1].Title != want {
			t.Errorf("%s: per-datapath figure %q, want %q", w.Name, figs[1].Title, want)
		}
		if len(figs) != 3 {
			t.Fatalf("%s: %d figures, want 3", w.Name, len(figs))
		}
		for _, f := range figs {
			svg := string(f.SVG)
			if !strings.Contains(svg, ">"+title+"<") {
				t.Errorf("%s: x axis is not titled %q", f.Title, title)
			}
			if strings.Contains(svg, ">variant<") || regexp.MustCompile(`>(P16|mss88)<`).MatchString(svg) {
				t.Errorf("%s: x axis by variant, not by value", f.Title)
			}
		}
	}
}

// The request/response percentiles' bars name what their groups are.
func TestRRFigureNamesMessageSize(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	sec := buildWorkloads(s, analysis.Build(s, samples), samples)
	for _, f := range allFigures(sec) {
		if strings.HasPrefix(f.Title, "Round-trip latency percentiles") {
			if !strings.Contains(string(f.SVG), ">message size<") {
				t.Errorf("%s: x axis not titled \"message size\"", f.Title)
			}
			return
		}
	}
	t.Error("no round-trip latency percentiles figure")
}
