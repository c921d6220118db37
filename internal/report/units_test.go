package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
)

// TestNoEmptyUnit: a metric without a unit (ceiling_at_high, a 0/1 flag)
// is named bare, not "ceiling_at_high ()", wherever a label puts the unit
// in parentheses; one with a unit keeps it.
func TestNoEmptyUnit(t *testing.T) {
	if got := analysis.WithUnit(iperf3.MetricCeilingAtHigh, ""); got != iperf3.MetricCeilingAtHigh {
		t.Errorf("withUnit without a unit = %q", got)
	}
	if got := analysis.WithUnit("bitrate", "Gbit/s"); got != "bitrate (Gbit/s)" {
		t.Errorf("withUnit with a unit = %q", got)
	}
	samples := quickSamples()
	for i := range samples {
		samples[i].Metrics[iperf3.MetricCeilingAtHigh] = 1
	}
	s := quickStudy(t)
	md := markdownOf(t, s, analysis.Build(s, samples))
	mdHas(t, md, iperf3.MetricCeilingAtHigh, "### bitrate (Gbit/s)")
	if strings.Contains(md, "()") {
		t.Errorf("summary.md has an empty unit: %q", lineWith(md, "()"))
	}
	logIfFailed(t, md)
}

// lineWith is the first line of text holding s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
