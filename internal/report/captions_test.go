package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A figure's caption says how many trials its points rest on and how
// its whiskers were computed; the normalized figure says its whiskers
// are the plain 95% interval, and in a run that decided cells at its
// looks that the decisions rest on the look's interval instead.
func TestFigureCaptionsNameNAndInterval(t *testing.T) {
	s, samples := pinStudy(t)
	m := analysis.Build(s, samples)
	figs, _ := datapathFigures(s, m)
	if len(figs) == 0 {
		t.Fatal("no datapath figure")
	}
	for _, f := range figs {
		if !strings.Contains(f.Caption, "(n = 3 trials each), whiskers are 95% Student t intervals of the mean") {
			t.Errorf("datapath figure %q: caption %q", f.Title, f.Caption)
		}
	}
	norm := func(m analysis.Model) string {
		for _, g := range analysis.Groups(m.Rows) {
			return normalizedFigure(g, results.MetricBitrate, newNumbers(m)).Caption
		}
		return ""
	}
	if got := norm(m); !strings.Contains(got, "(n = 3 trials each); whiskers are the plain 95% interval over all of each cell's trials (Fieller's") ||
		strings.Contains(got, "at that look") {
		t.Errorf("normalized figure of a fixed run: %q", got)
	}
	ratio, low, high := 1.0, 0.98, 1.02
	m.TrialsMin, m.TrialsPlanned = 1, 3 // an adaptive design: its looks decide
	m.Stops = []results.Stop{{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: "busy", Workload: "far", Replicas: 1}, Metric: results.MetricBitrate,
		Status: "target", N: 3, Decision: "equal", Versus: "baseline", Look: 1, Confidence: 0.9875, Ratio: &ratio, Low: &low, High: &high}}
	if got := norm(m); !strings.Contains(got, "the decision rests on the interval at that look, at its stricter confidence") {
		t.Errorf("normalized figure of an adaptive run: %q", got)
	}
	if got := figureN([]analysis.Row{{SummaryRow: results.SummaryRow{Metric: "x", N: 3}}, {SummaryRow: results.SummaryRow{Metric: "x", N: 10}}}, "x"); got != "n = 3 to 10 trials each" {
		t.Errorf("figureN over 3 and 10 trials: %q", got)
	}
}

// The workloads' figures with whiskers around a mean say how many trials
// their points rest on and what the whiskers are, as the datapath
// figures do; where every point is one trial (cnibench run --quick), that
// there is no interval: they said "mean over trials with 95% CI" over
// whiskers of zero length, and no n in an adaptive run.
func TestWorkloadCaptionsNameN(t *testing.T) {
	firstTrials := func(samples []results.Sample) []results.Sample {
		var out []results.Sample
		for _, x := range samples {
			if x.Trial == 1 {
				out = append(out, x)
			}
		}
		return out
	}
	// The datapath and impairment figures' captions alike.
	one := analysis.Row{SummaryRow: results.SummaryRow{Metric: "x", N: 1}}
	if got := meanNote([]analysis.Row{one}, "x"); got != "the value of a single trial (n = 1 trial each: no interval)" {
		t.Errorf("meanNote of one trial: %q", got)
	}
	ws, wsamples := syntheticWorkloads(t)
	ss, ssamples := startupRun(t, 2)
	qs, qsamples := qperfRun(t, "messageSizes: [1, 64]")
	for _, c := range []struct {
		name     string
		two, one []results.Sample
		s        *study.Study
		titles   []string
	}{
		{"workloads", wsamples, firstTrials(wsamples), ws, []string{"UDP received", "UDP lost", "UDP jitter", "Bitrate vs parallel streams",
			"Round-trip latency percentiles", "HTTP requests/s", "Measured bitrate vs background", "Node CPU vs background"}},
		{"startup", ssamples, firstTrials(ssamples), ss, []string{"Pod network start-up vs", "startup_ms per datapath"}},
		{"qperf", qsamples, firstTrials(qsamples), qs, []string{"Mean round-trip time"}},
	} {
		for _, run := range []struct {
			samples []results.Sample
			want    string
		}{
			{c.two, "mean over trials (n = 2 trials each), whiskers are " + meanWhiskers},
			{c.one, "the value of a single trial (n = 1 trial each: no interval)"},
		} {
			m := analysis.Build(c.s, run.samples)
			figs := append(allFigures(buildWorkloads(c.s, m, run.samples)), sweepsAcrossDatapaths(c.s, m.Rows)...)
			for _, prefix := range c.titles {
				found := false
				for _, f := range figs {
					if !strings.HasPrefix(f.Title, prefix) {
						continue
					}
					found = true
					if !strings.Contains(f.Caption, run.want) || strings.Contains(f.Caption, "CI") ||
						(strings.Contains(run.want, "single") && strings.Contains(f.Caption, "95%")) {
						t.Errorf("%s, %d samples: %q: caption %q, want %q", c.name, len(run.samples), f.Title, f.Caption, run.want)
					}
				}
				if !found {
					t.Errorf("%s: no figure %q", c.name, prefix)
				}
			}
		}
	}
}

// The per-core figure of a one-trial run says its points are single
// trials with no interval, not that its whiskers are Student t intervals.
func TestCoreCaptionOfOneTrial(t *testing.T) {
	row := func(n int) analysis.Row {
		return analysis.Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "d", Tuning: "baseline", Workload: "w", Replicas: 1},
			Metric: results.MetricCoreIdle, CPU: 0, N: n, Mean: 50}}
	}
	for _, c := range []struct {
		n         int
		want, not string
	}{
		{1, "the value of a single trial (n = 1 trial each: no interval)", "whiskers"},
		{3, "mean over trials (n = 3 trials each), whiskers are 95% Student t", "single trial"},
	} {
		g := analysis.Groups([]analysis.Row{row(c.n)})[0]
		got := coreFigure(g, results.MetricCoreIdle, 1, newNumbers(analysis.Model{}), func(cpu int) string { return "" }).Caption
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("n=%d: caption %q, want %q and not %q", c.n, got, c.want, c.not)
		}
	}
}
