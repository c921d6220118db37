package report

import (
	"regexp"
	"slices"
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

// placed is a figure's x axis after apply for a sweep with points at xs:
// the plot, and each point's position across the axis (0 left, 1 right).
func placed(t *testing.T, w study.Workload, xs ...float64) (*plot.Plot, []float64) {
	t.Helper()
	var pts plotter.XYs
	for _, x := range xs {
		pts = append(pts, plotter.XY{X: x, Y: 1})
	}
	p := plot.New()
	s, err := plotter.NewScatter(pts)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(s)
	axisOf(w, w.Variants()).apply(p)
	var at []float64
	for _, x := range xs {
		at = append(at, p.X.Scale.Normalize(p.X.Min, p.X.Max, x))
	}
	return p, at
}

func tickLabels(p *plot.Plot) []string {
	var out []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

// cni-compare's background sweep, 0, 1, 100, 400, 1000 and 1500
// connections: on the linear axis a zero forces, 0 and 1 drew on top of
// each other, hiding the paper's none-versus-one comparison. Past two
// decades with a zero the axis is logarithmic from the smallest nonzero
// value with 0 one decade to its left.
func TestSweepAxisSeparatesZeroFromOne(t *testing.T) {
	conns := []int{0, 1, 100, 400, 1000, 1500}
	bg := study.Workload{Name: "bg", Tool: "iperf3", Background: &study.Background{Connections: conns, Pairs: 4, Rate: "10M"}}
	p, at := placed(t, bg, 0, 1, 100, 400, 1000, 1500)
	if p.X.Min > 0 || p.X.Max < 1500 {
		t.Errorf("x axis from %v to %v, want 0 to 1500 inside", p.X.Min, p.X.Max)
	}
	for i := 1; i < len(at); i++ {
		if at[i] <= at[i-1] {
			t.Fatalf("points at %v, want increasing", at)
		}
	}
	// 0 to 1 is as wide as 1 to 10: a decade, of the 3.2 to 1500.
	if gap := at[1] - at[0]; gap < 0.15 {
		t.Errorf("0 and 1 connections %.3f of the axis apart (points at %v), want a decade", gap, at)
	}
	labels := strings.Join(tickLabels(p), " ")
	for _, want := range []string{"0", "1", "10", "100", "1000"} {
		if !slices.Contains(tickLabels(p), want) {
			t.Errorf("x tick labels %q lack %q", labels, want)
		}
	}
	// Within two decades a zero keeps the linear axis from 0.
	few := study.Workload{Name: "bg", Tool: "iperf3", Background: &study.Background{Connections: []int{0, 1, 8}, Pairs: 4, Rate: "10M"}}
	if p, _ := placed(t, few, 0, 1, 8); p.X.Min != 0 || p.X.Scale != (plot.LinearScale{}) {
		t.Errorf("0 to 8 connections: x from %v, scale %T, want linear from 0", p.X.Min, p.X.Scale)
	}
}

// One point, or all at 0, left the axis from -1 to 1 (0 plus headroom
// times 0 is 0, and gonum widens an empty range by one each way): a
// negative count of connections. The axis is 0 to 1 where the point is
// 0, from 0 past it otherwise (a log axis with 0 leaves a tenth of its
// first decade left of 0, as the log axis leaves room before its first
// point).
func TestSweepAxisOfOnePoint(t *testing.T) {
	bg := func(conns ...int) study.Workload {
		return study.Workload{Name: "bg", Tool: "iperf3", Background: &study.Background{Connections: conns, Pairs: 4, Rate: "10M"}}
	}
	for _, c := range []struct {
		name string
		w    study.Workload
		x    float64
	}{
		{"only 0 of 0, 1, 100", bg(0, 1, 100), 0},
		{"only 0 of 0, 1, 1000", bg(0, 1, 1000), 0},
		{"only 100 of 0, 1, 1000", bg(0, 1, 1000), 100},
		{"only 4 of 1, 4, 16 flows", study.Workload{Name: "f", Tool: "iperf3", Parallels: []int{1, 4, 16}}, 4},
	} {
		p, at := placed(t, c.w, c.x)
		if p.X.Min < -0.1 || p.X.Min > 0 || p.X.Max <= c.x || p.X.Max < 1 {
			t.Errorf("%s: x axis from %v to %v, want from 0 past %v and 1", c.name, p.X.Min, p.X.Max, c.x)
		}
		if at[0] < 0 || at[0] >= 1 {
			t.Errorf("%s: point at %v of the axis", c.name, at[0])
		}
	}
	p, _ := placed(t, bg(0, 1, 100), 0)
	if p.X.Min != 0 || p.X.Max != 1 {
		t.Errorf("only 0 on a linear axis: from %v to %v, want 0 to 1", p.X.Min, p.X.Max)
	}
}
