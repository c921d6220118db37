package report

import (
	"image/color"
	"slices"

	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/study"
)

// tuningOrder is the order the tunings' colours and glyphs follow: the
// study's list of tunings, the baseline where it is listed ("tunings:
// [rfs+, baseline]" is valid), or without the study the order the run's
// rows first name them (the study's cell order).
func tuningOrder(s *study.Study, fallback []string) []string {
	if s == nil || len(s.Spec.Tunings) == 0 {
		return slices.Clone(fallback)
	}
	var out []string
	for _, t := range s.Spec.Tunings {
		out = append(out, t.Name)
	}
	return out
}

// tuningIndex is a tuning's place in n.tunings, which every figure that
// draws tunings colours by (normalized, per-core, glance), so a tuning
// has one colour and glyph in all of them; the glance used to count
// from its first tuning after the baseline, and the others by position
// in their group. A tuning the list lacks (rows of a study since
// edited) is added after the others when first asked for.
func (n *numbers) tuningIndex(t string) int {
	i := slices.Index(n.tunings, t)
	if i < 0 {
		n.tunings = append(n.tunings, t)
		i = len(n.tunings) - 1
	}
	return i
}

// tuningColor and tuningShape are a tuning's colour and glyph in every
// figure (tuningIndex).
func (n *numbers) tuningColor(t string) color.Color      { return seriesColor(n.tuningIndex(t)) }
func (n *numbers) tuningShape(t string) draw.GlyphDrawer { return seriesShape(n.tuningIndex(t)) }
