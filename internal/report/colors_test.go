package report

import (
	"fmt"
	"image/color"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// hex is a colour as the SVG writes it.
func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// A tuning keeps its colour in every figure when the baseline is not
// listed first: with "tunings: [rfs, baseline]" rfs is the study's
// first colour in the glance's bars (which leave the baseline out) as in
// the per-core bars and the normalized lines beside the baseline's.
func TestTuningColoursFollowTheStudy(t *testing.T) {
	rfs, base := hex(seriesColor(0)), hex(seriesColor(1))
	for _, reps := range []string{"replicas=[1]", "replicas=[1, 2, 4]"} {
		s := quickStudy(t, "tunings=[rfs, baseline]", reps)
		var smp []results.Sample
		for _, x := range quickSamples() {
			if strings.Contains(reps, fmt.Sprint(x.Cell.Replicas)) {
				smp = append(smp, x)
			}
		}
		pg := buildPage(&results.Run{Samples: smp}, s, analysis.Build(s, smp))
		if len(pg.Groups) != 1 || pg.Groups[0].Normalized == nil || len(pg.Groups[0].Idle) == 0 {
			t.Fatalf("%s: groups %+v", reps, pg.Groups)
		}
		g := pg.Groups[0]
		norm, idle := string(g.Normalized.SVG), string(g.Idle[0].SVG)
		if !strings.Contains(norm, rfs) || !strings.Contains(idle, rfs) || !strings.Contains(idle, base) {
			t.Errorf("%s: rfs not %s (baseline %s) in %q and %q", reps, rfs, base, g.Normalized.Title, g.Idle[0].Title)
		}
		// The glance draws no baseline bar: its colour is not there.
		if reps == "replicas=[1]" && strings.Contains(norm, base) {
			t.Errorf("the glance of rfs has the baseline's colour %s", base)
		}
	}
}
