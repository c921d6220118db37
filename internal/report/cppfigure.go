package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/study"
)

// stackBar is one stacked bar: a datapath's (and variant's) cost per
// packet by component, in unit (cpp.UnitNs or cpp.UnitCycles), or a
// pod's set-up by step (unit stepsUnit, startup.go).
type stackBar struct {
	label  string
	unit   string
	values map[string]float64
	total  float64
	// totalRow is the row of the measured total the bar stacks to: how
	// many trials it rests on (stackNote).
	totalRow analysis.Row
}

// stackNote says what a stacked figure's bars are, as meanNote does for
// the figures with whiskers: means over how many trials, and that no
// interval is drawn (a stack of means has none of its own; summary.csv
// has each component's); or the values of a single trial.
func stackNote(bars []stackBar) string {
	var rows []analysis.Row
	var metrics []string
	for _, b := range bars {
		rows, metrics = append(rows, b.totalRow), append(metrics, b.totalRow.Metric)
	}
	n := figureN(rows, metrics...)
	if _, hi := trialRange(rows, metrics); hi == 1 {
		return "Each bar is the values of a single trial (" + n + ")."
	}
	return "Each bar stacks means over trials (" + n + "); no interval is drawn: summary.csv has each component's."
}

func cppBarOf(d sweepData, v study.Workload) (stackBar, bool) {
	var b stackBar
	for _, u := range cpp.Units {
		if tot, ok := d.row(v, cpp.TotalMetric(u)); ok {
			b = stackBar{label: d.sw.Datapath, unit: u, values: map[string]float64{}, total: tot.Mean, totalRow: tot}
			break
		}
	}
	if b.unit == "" {
		return stackBar{}, false
	}
	if len(d.sw.Variants) > 1 {
		b.label += " " + paramLabel(v)
	}
	if !d.sw.Variants[0].IntraNode() {
		b.label += " (inter)"
	} else {
		b.label += " (intra)"
	}
	for k, r := range d.idx {
		if k.Cell != d.sw.Cell(v) || k.CPU != -1 || r.N == 0 {
			continue
		}
		if c, u, ok := cpp.ComponentOf(k.Metric); ok && u == b.unit {
			b.values[c] = r.Mean
		}
	}
	return b, true
}

// cppFigure stacks the bars of one unit. The unit is in the title, the
// axis and the caption: cycles (hardware counter) and ns of CPU time
// (cpu-clock) are different quantities.
func cppFigure(bars []stackBar, unit string) figure {
	title := "CPU cost per packet by component (" + unit + ")"
	how := "Nanoseconds of CPU time per MTU-sized packet received by the server pods, from perf cpu-clock samples"
	note := "cpu-clock gives time, not cycles (a run samples cycles only where the machine counts them; its notes say why it did not): multiply by the clock rate for seed 004's cycles."
	if unit == cpp.UnitCycles {
		how = "Hardware CPU cycles per MTU-sized packet received by the server pods, from perf cycles samples"
		note = "Cycles are seed 004's unit; they do not include time a CPU spent halted."
	}
	f := figure{Title: title, Caption: how + " (self time, idle and unrelated processes excluded) attributed by kernel symbol " +
		"(internal/metrics/cpp/components.yaml). Bars stack to the measured total; what it leaves out of other processes' CPU " +
		"(a shared machine's other users, wireguard's kworker crypto) is cpp_excluded_" + unit + " in summary.csv. " + stackNote(bars) + " " + note}
	m, err := cpp.DefaultMap()
	if err != nil {
		f.Missing = err.Error()
		return f
	}
	return stackedFigure(f, title, unit+" / packet", bars, m.Names(), cpp.Other, func(n string) string { return n })
}

// stackedFigure draws one stacked bar per entry of bars (a datapath's
// components or steps, in names' order; other grey) with a legend entry
// for each name some bar has.
func stackedFigure(f figure, title, ylabel string, bars []stackBar, names []string, other string, label func(string) string) figure {
	p := newPlot(title, "datapath", ylabel)
	leg := newLegend()
	st := &stackedBars{}
	var ticks []plot.Tick
	for i, b := range bars {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: b.label})
		var col []float64
		for _, n := range names {
			col = append(col, b.values[n])
		}
		st.Bars = append(st.Bars, col)
	}
	for i, n := range names {
		c := cppPalette[i%len(cppPalette)]
		if n == other {
			c = color.Gray{Y: 0xb0}
		}
		st.Colors = append(st.Colors, c)
		used := false
		for _, b := range bars {
			used = used || b.values[n] > 0
		}
		if used {
			leg.Add(label(n), barThumb{c})
		}
	}
	p.Add(st)
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return render(f, p, leg, vg.Length(math.Max(figW, float64(200+len(bars)*90))), figH)
}

// cppPalette has a distinct colour for each of the components.yaml
// components (Tableau 20, dark and light alternating).
var cppPalette = []color.Color{
	rgb(0x1f, 0x77, 0xb4), rgb(0xff, 0x7f, 0x0e), rgb(0x2c, 0xa0, 0x2c), rgb(0xd6, 0x27, 0x28),
	rgb(0x94, 0x67, 0xbd), rgb(0x8c, 0x56, 0x4b), rgb(0xe3, 0x77, 0xc2), rgb(0xbc, 0xbd, 0x22),
	rgb(0x17, 0xbe, 0xcf), rgb(0xae, 0xc7, 0xe8), rgb(0xff, 0xbb, 0x78), rgb(0x98, 0xdf, 0x8a),
	rgb(0xff, 0x98, 0x96), rgb(0xc5, 0xb0, 0xd5), rgb(0xc4, 0x9c, 0x94), rgb(0xf7, 0xb6, 0xd2),
}

// stackedBars draws one bar per x position, stacked from component values.
type stackedBars struct {
	Bars   [][]float64 // [bar][component]
	Colors []color.Color
}

func (s *stackedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, bar := range s.Bars {
		x0, x1 := trX(float64(i)-0.3), trX(float64(i)+0.3)
		y := 0.0
		for j, v := range bar {
			if !(v > 0) {
				continue
			}
			y0, y1 := trY(y), trY(y+v)
			c.FillPolygon(s.Colors[j%len(s.Colors)], c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
			y += v
		}
	}
}

func (s *stackedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(len(s.Bars))-0.5
	for _, bar := range s.Bars {
		t := 0.0
		for _, v := range bar {
			if v > 0 {
				t += v
			}
		}
		ymax = math.Max(ymax, t)
	}
	if ymax == 0 {
		ymax = 1
	}
	return xmin, xmax, 0, ymax * (1 + headroom)
}
