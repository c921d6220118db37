package report

import (
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// A title wider than its figure is broken into lines that fit, at its
// spaces, instead of being cropped at the figure's edges (nic-modes'
// seven workloads in one bitrate figure lost both ends); a short one
// stays as it is.
func TestWrapTitle(t *testing.T) {
	p := newPlot("", "", "")
	sty := p.Title.TextStyle
	width := vg.Points(300)
	long := "bitrate by datapath (tcp-chhc, flows-chhc@P1, flows-chhc@P2, mss-chhc@mss536, mss-chhc@mss1460, numa-same, numa-other)"
	got := wrapTitle(sty, long, width)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 {
		t.Fatalf("a title %v wide in %v: not wrapped: %q", sty.Width(long), width, got)
	}
	for _, l := range lines {
		if sty.Width(l) > width {
			t.Errorf("line %q is %v wide, more than %v", l, sty.Width(l), width)
		}
	}
	if strings.Join(strings.Fields(got), " ") != long {
		t.Errorf("wrapping changed the words: %q", got)
	}
	if short := "bitrate by datapath (udp-chhc)"; wrapTitle(sty, short, width) != short {
		t.Errorf("a short title was changed: %q", wrapTitle(sty, short, width))
	}
	if word := strings.Repeat("x", 200); wrapTitle(sty, word, width) != word {
		t.Error("a word wider than the figure was split")
	}
}
