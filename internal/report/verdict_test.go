package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestVerdictTableTuningsAndReplicas: verdicts of one datapath, workload
// and impairment at two tunings, one failing, keep a row each (the
// failure was overwritten by the pass), with a tuning column; replica
// counts likewise. A run with one tuning and one count has neither
// column.
func TestVerdictTableTuningsAndReplicas(t *testing.T) {
	c := func(tn string, reps int) results.Cell {
		return results.Cell{Datapath: "flannel-vxlan", Tuning: tn, Workload: "udp@500M", Replicas: reps, Impairment: "loss1"}
	}
	v := func(c results.Cell, pass bool) analysis.Verdict {
		return analysis.Verdict{Cell: c, Protocol: "udp", Pass: pass}
	}
	m := analysis.Model{Verdicts: []analysis.Verdict{v(c("baseline", 1), false), v(c("rfs", 1), true)}}
	tb := verdictTable(m)
	if strings.Join(tb.Head, ",") != "datapath,tuning,workload,loss1" || len(tb.Rows) != 2 ||
		strings.Join(tb.Rows[0], ",") != "flannel-vxlan,baseline,udp@500M,✗" || strings.Join(tb.Rows[1], ",") != "flannel-vxlan,rfs,udp@500M,✓" {
		t.Errorf("two tunings: head %v rows %v, want a row each with a tuning column", tb.Head, tb.Rows)
	}
	if got := verdictCaption(m, nil); !strings.HasPrefix(got, "Verdict per datapath, workload, tuning and impairment") {
		t.Errorf("caption %q", got)
	}
	m.Verdicts = []analysis.Verdict{v(c("baseline", 1), true), v(c("baseline", 4), false)}
	tb = verdictTable(m)
	if strings.Join(tb.Head, ",") != "datapath,workload,replicas,loss1" || len(tb.Rows) != 2 || tb.Rows[1][2] != "4" || tb.Rows[1][3] != "✗" {
		t.Errorf("two replica counts: head %v rows %v, want a row each with a replicas column", tb.Head, tb.Rows)
	}
	m.Verdicts = m.Verdicts[:1]
	if tb = verdictTable(m); strings.Join(tb.Head, ",") != "datapath,workload,loss1" {
		t.Errorf("one tuning and count: head %v, want no tuning or replicas column", tb.Head)
	}
}

// A verdict whose sender fell behind says how much it sent, beside the
// paper's verdict, and the caption says what that means.
func TestVerdictTableSentShare(t *testing.T) {
	paper := false
	m := analysis.Model{Verdicts: []analysis.Verdict{{Cell: results.Cell{Datapath: "flannel-vxlan", Workload: "udp@1500M"},
		Protocol: "udp", Pass: true, SentShare: 0.293, Paper: &paper}}}
	tb := verdictTable(m)
	if len(tb.Rows) != 1 || tb.Rows[0][2] != "✓ (sent 29%) (paper ✗)" {
		t.Errorf("rows %v, want ✓ (sent 29%%) (paper ✗) without ≠", tb.Rows)
	}
	if !strings.Contains(verdictCaption(m, nil), `"sent N%": the UDP sender sent only N% of the offered rate`) {
		t.Errorf("caption %q does not say what sent N%% means", verdictCaption(m, nil))
	}
}

// A bound row says what its senders sent, and where that is below the
// bound it gives no ratio.
func TestBoundTableSent(t *testing.T) {
	c := results.Cell{Datapath: "flannel-vxlan", Workload: "udp@1500M"}
	m := analysis.Model{Bounds: []analysis.Bound{
		{Cell: c, LinkBits: 1e9, Encap: 50, Payload: 1422, Offered: 1500e6, Bound: 924.6e6, Measured: 455.5e6, Sent: 460.2e6, Share: 0.493},
		{Cell: c, LinkBits: 1e9, Encap: 50, Payload: 1422, Offered: 1500e6, Bound: 924.6e6, Measured: 900e6, Share: 0.973},
	}}
	tb := boundTable(m)
	if len(tb.Rows) != 2 || tb.Rows[0][7] != "460.2" || tb.Rows[0][10] != "not saturated: sent < bound" ||
		tb.Rows[1][7] != "as offered" || tb.Rows[1][10] != "0.973" {
		t.Errorf("rows %v", tb.Rows)
	}
}

// The bound table renders the model: the share of the bound is
// Bound.Share as analysis computed it, and the measured bitrate the
// cell's row, mean [95% CI], not a bare mean scaled here.
func TestBoundTableRendersTheModel(t *testing.T) {
	c := results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@1500M", Replicas: 1}
	row := analysis.Row{SummaryRow: results.SummaryRow{Cell: c, Metric: results.MetricBitrate, CPU: -1, N: 3,
		Mean: 900e6, CI95Low: 890e6, CI95High: 910e6}}
	m := analysis.Model{Rows: []analysis.Row{row}, Bounds: []analysis.Bound{
		{Cell: c, LinkBits: 1e9, Encap: 50, Payload: 1422, Offered: 1500e6, Bound: 924.6e6, Measured: 900e6, Share: 0.5},
	}}
	tb := boundTable(m)
	if got := tb.Rows[0][9]; got != "900.0 [890.0, 910.0]" {
		t.Errorf("measured %q, want the row's mean [95%% CI] in Mbit/s", got)
	}
	if got := tb.Rows[0][10]; got != "0.500" {
		t.Errorf("measured / bound %q, want the model's share 0.500", got)
	}
	if got := tb.Rows[0][8]; got != "924.6" {
		t.Errorf("bound %q", got)
	}
}

// The run's end names the UDP cells whose senders fell behind, with what
// they sent; nothing when none did.
func TestSenderBehindLine(t *testing.T) {
	if l := SenderBehindLine(nil); l != "" {
		t.Errorf("no cells: %q", l)
	}
	c := results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@1500M", Replicas: 1}
	l := SenderBehindLine([]analysis.SenderBehind{{Cell: c, Offered: 1500e6, Sent: 460.2e6}})
	if !strings.HasPrefix(l, "note: in 1 UDP cell the senders sent less than 97% of the offered rate (flannel-vxlan udp@1500M baseline r=1: 460.2 of 1500.0 Mbit/s)") {
		t.Errorf("line %q", l)
	}
}

// A sender that fell behind (under ceiling.BehindShare, 97%) never reads
// as having sent 97%: 0.966 rounded to a whole percent was "(sent 97%)"
// beside a pass, the share it fell short of.
func TestVerdictSentShareNotRoundedToTheThreshold(t *testing.T) {
	c := results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@1G", Replicas: 1, Impairment: "none"}
	for share, want := range map[float64]string{0.966: "✓ (sent 96.6%)", 0.9695: "✓ (sent 96.95%)", 0.5: "✓ (sent 50%)"} {
		m := analysis.Model{Verdicts: []analysis.Verdict{{Cell: c, Protocol: "udp", Pass: true, SentShare: share}}}
		if got := verdictTable(m).Rows[0][2]; got != want {
			t.Errorf("sent share %v: %q, want %q", share, got, want)
		}
	}
}

// The seed-003 paper's Table IX and figures are named only for a study
// citing it: a user's study of impairments is not Santos et al.'s.
func TestSeed003NamedOnlyForItsStudies(t *testing.T) {
	fb, user := &study.Study{}, &study.Study{}
	fb.Metadata.Source, user.Metadata.Source = "seed 003 (paper)", "our lab's testbed"
	if got := verdictCaption(analysis.Model{}, fb); !strings.Contains(got, "published verdict (Table IX)") {
		t.Errorf("flannel-backends' caption %q does not name Table IX", got)
	}
	if got := impairmentsIntro(fb); !strings.Contains(got, "(the seed-003 paper's Figs 4-7 and 9, Tables VII-VIII)") || !strings.Contains(got, "(Fig 8)") {
		t.Errorf("flannel-backends' impairments intro %q", got)
	}
	for _, s := range []*study.Study{user, nil} {
		for _, got := range []string{verdictCaption(analysis.Model{}, s), impairmentsIntro(s)} {
			if strings.Contains(got, "Table") || strings.Contains(got, "Fig") || strings.Contains(got, "seed") {
				t.Errorf("a study not citing seed 003: %q", got)
			}
		}
	}
}

// A published verdict naming a variant stands beside that variant only:
// the caption says so, so the other variants' rows without "(paper …)"
// are explained; a study whose verdicts name no variant is not told.
func TestVerdictCaptionVariantOnly(t *testing.T) {
	s := &study.Study{}
	s.Spec.Verdict = &study.Verdict{Published: []study.PublishedVerdict{{Datapath: "a", Protocol: "tcp", Impairment: "none", Pass: true}}}
	const want = "a published verdict that names a workload variant stands beside that variant's cells only"
	if got := verdictCaption(analysis.Model{}, s); strings.Contains(got, want) {
		t.Errorf("no verdict names a variant, yet: %q", got)
	}
	s.Spec.Verdict.Published = append(s.Spec.Verdict.Published, study.PublishedVerdict{Datapath: "a", Protocol: "udp", Workload: "udp@800M", Impairment: "none"})
	if got := verdictCaption(analysis.Model{}, s); !strings.Contains(got, want) {
		t.Errorf("caption %q does not say a variant's verdict stands beside it only", got)
	}
}
