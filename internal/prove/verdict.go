package prove

// A candidate's verdict from its proof's cells, and the measured text
// that lists them.

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/stats"
)

// judged sorts a proof's cells by what they say of the candidate, each
// named as the verdict's reason names it ("tcp at 1 pair(s) (1.080)",
// after its metric where the cells' differ).
type judged struct {
	gains, worse, slight, equal []string
	// gaveUp are B's cells the runner gave up, with why, where A's same
	// cell ran; both those it gave up on both sides, with both whys;
	// notMeasured those the budget never reached. None is judged.
	gaveUp, both, notMeasured []string
	// n counts the cells judged: those measured and not given up.
	n int
}

// judge sorts cs: better is a gain where its estimate is beyond the
// margin (above 1+margin, or below 1/(1+margin) for a metric where lower
// is better: latency), each cell in its own metric's direction
// (stats.DirectionOf(c.Metric)).
func judge(cs []advise.ProofCell, margin float64) judged {
	beyond := func(c advise.ProofCell) bool {
		if stats.DirectionOf(c.Metric) == stats.LowerIsBetter {
			return *c.Ratio < 1/(1+margin)
		}
		return *c.Ratio > 1+margin
	}
	var j judged
	named := mixed(cs)
	for _, c := range cs {
		at := c.Where()
		if named {
			at = c.Metric + " " + at
		}
		switch {
		case c.NotMeasured != "":
			j.notMeasured = append(j.notMeasured, at+" ("+c.NotMeasured+")")
			continue
		case c.GaveUp != "" && c.GaveUpA != "":
			j.both = append(j.both, at+" (B: "+c.GaveUp+"; A too: "+c.GaveUpA+")")
			continue
		case c.GaveUp != "":
			j.gaveUp = append(j.gaveUp, at+" ("+c.GaveUp+")")
			continue
		}
		j.n++
		if c.Ratio != nil {
			at += fmt.Sprintf(" (%.3f)", *c.Ratio)
		}
		switch stats.Verdict(c.Decision) {
		case stats.Better:
			if c.Ratio != nil && beyond(c) {
				j.gains = append(j.gains, at)
			} else {
				j.slight = append(j.slight, at)
			}
		case stats.Worse:
			j.worse = append(j.worse, at)
		case stats.Equal:
			j.equal = append(j.equal, at)
		}
	}
	return j
}

// verdict: accepted when some cell is better (its interval off 1) with
// an estimate beyond the margin and none is worse or given up with B
// alone; rejected when some cell is worse, or some cell is decided and
// none is better beyond the margin (and none given up with B alone);
// failed when the runner gave up a cell of B (its trials failed every
// attempt there) but not A's, and none is worse: that cell has no verdict, and a gain in another does not
// outweigh B breaking it; not measured when no cell was judged and A's
// trials failed every attempt in some cell as B's did: the workload
// failed there whatever the setting, which says nothing of the
// candidate, so it is not "failed"; else undecided. A cell given up on
// both sides beside judged cells is, as one the budget never reached,
// not part of the verdict. why names the cells that decided it, so a
// trade-off (better at one flow, worse at four) reads as one, each with
// its metric where the cells' differ, and the cells the verdict does
// not rest on.
func verdict(cs []advise.ProofCell, margin float64) (v, why string) {
	j := judge(cs, margin)
	list := func(ss []string) string { return strings.Join(ss, ", ") }
	pct := fmt.Sprintf("%.0f%%", 100*margin)
	gaveUp := "given up in " + list(j.gaveUp) + ": its trials failed every attempt there"
	both := "given up with A as with B in " + list(j.both)
	switch {
	case len(j.worse) > 0:
		why = "worse in " + list(j.worse)
		if len(j.gains) > 0 {
			why += ", though better in " + list(j.gains) + ": a trade-off, not a gain"
		}
		if len(j.gaveUp) > 0 {
			why += "; " + gaveUp
		}
		v = advise.Rejected
	case len(j.gaveUp) > 0:
		why = gaveUp + ", so it is not accepted"
		if len(j.gains) > 0 {
			why += " though better in " + list(j.gains)
		}
		v = advise.Failed
	case len(j.gains) > 0:
		why = "better, by an estimate beyond " + pct + ", in " + list(j.gains) + ", worse in none"
		if j.n > 1 {
			// Each cell stops on its own decision, uncorrected for the
			// others: one false "better" among m accepts (Bonferroni's
			// bound on how often, m times a cell's one-sided rate).
			why += fmt.Sprintf(" (%d cells, each judged alone: a change without effect passes at most %.1f%% of the time)", j.n, 100*float64(j.n)*(1-stats.Confidence)/2)
		}
		v = advise.Accepted
	case len(j.slight)+len(j.equal) > 0:
		var parts []string
		if len(j.equal) > 0 {
			parts = append(parts, "equal within ±"+pct+" in "+list(j.equal))
		}
		if len(j.slight) > 0 {
			parts = append(parts, "better by less than "+pct+" in "+list(j.slight))
		}
		v, why = advise.Rejected, strings.Join(parts, "; ")+": no gain worth the change"
	case j.n == 0 && len(j.both) > 0:
		v, why = advise.Unmeasured, both+": A's trials failed every attempt there too, so the failure is the machine's or the workload's and says nothing of the candidate"
	default:
		v, why = advise.Undecided, "no cell decided within the budget"
	}
	if len(j.both) > 0 && v != advise.Unmeasured {
		why += "; " + both + ", so not part of the verdict"
	}
	if len(j.notMeasured) > 0 {
		// The verdict rests on the cells measured: say which were not.
		why += "; not measured, so not part of the verdict: " + list(j.notMeasured)
	}
	return v, why
}

// cellText is one cell of a proof: "rr at 1 pair(s): 0.850 [0.800,
// 0.900] paired-t 95%, n=6, better"; a cell B's trials failed in every
// attempt says it was given up and why (and why A's was, where it was
// too), one the budget never reached that it was not measured.
func cellText(c advise.ProofCell) string {
	if c.NotMeasured != "" {
		return fmt.Sprintf("%s: not measured (%s)", c.Where(), c.NotMeasured)
	}
	iv := "no interval"
	if c.Ratio != nil && c.Low != nil && c.High != nil {
		iv = fmt.Sprintf("%.3f [%.3f, %.3f] %s %s", *c.Ratio, *c.Low, *c.High, c.Method, stats.LevelText(c.Confidence))
	}
	out := fmt.Sprintf("%s: %s, n=%d, %s", c.Where(), iv, c.N, c.Decision)
	if c.GaveUp != "" {
		out = strings.TrimSuffix(out, ", ") + ", given up: " + c.GaveUp
	}
	if c.GaveUpA != "" {
		out += "; A's cell too: " + c.GaveUpA
	}
	return out
}

// disturbedText says how many of a cell's trials, and of A's, were
// counted though disturbed (the noise guard's repeats used up): their
// spread is in the interval, and a quiet machine may decide what this
// run did not. "" for none.
func disturbedText(c advise.ProofCell, a string) string {
	var parts []string
	if c.Disturbed > 0 {
		parts = append(parts, fmt.Sprintf("%d of its trials", c.Disturbed))
	}
	if c.DisturbedA > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s's", c.DisturbedA, a))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " and ") + " counted though disturbed)"
}

// measured says B/A per cell with the interval, n and the decision, on
// the cells' metric, or each cell's where they differ.
func measured(p *advise.Proof) string {
	if len(p.Cells) == 0 {
		return "no comparable cells in " + p.RunDir
	}
	// Where the cells' metrics differ each cell names its own: "B/A
	// (margin ±2%): startup_ms startup at 1 pair(s): ...; bitrate tcp at
	// 1 pair(s): ...".
	named := mixed(p.Cells)
	var parts []string
	for _, c := range p.Cells {
		t := cellText(c) + disturbedText(c, p.A)
		if named {
			t = c.Metric + " " + t
		}
		parts = append(parts, t)
	}
	out := fmt.Sprintf("%s/%s (margin ±%.0f%%): %s", p.B, p.A, 100*p.Margin, strings.Join(parts, "; "))
	if !named {
		out = p.Metric + " " + out
	}
	if len(p.Also) > 0 {
		var also []string
		for _, m := range p.Also {
			var cs []string
			for _, c := range m.Cells {
				cs = append(cs, cellText(c))
			}
			also = append(also, m.Metric+" "+strings.Join(cs, ", "))
		}
		out += ". Besides the verdict, over all trials at 95%: " + strings.Join(also, "; ")
	}
	out += pollingText(p)
	if p.Shape != "" {
		out += ". Measured on " + p.Shape
	}
	return out
}
