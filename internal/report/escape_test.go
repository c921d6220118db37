package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// summary.md's free text renders as written: a study's description with
// a script in it, a reference note closing a cell and a warning quoting
// "<stdin>" are escaped (a rendered summary.md ran the script, dropped
// "<stdin>"), while "p <0.001" stays readable.
func TestMarkdownEscapesFreeText(t *testing.T) {
	s := &study.Study{}
	s.Metadata.Name, s.Metadata.Description, s.Metadata.Source = "hostile", `evil <script>alert("d")</script>`, "a <b>paper</b>"
	v := 1.0
	m := analysis.Model{Study: "hostile", References: []analysis.RefMatch{{
		Reference: study.Reference{Metric: results.MetricBitrate, Value: &v, Note: "</td></tr><script>x</script>"}, Label: analysis.RefLabel}}}
	run := &results.Run{Warnings: []string{"samples.jsonl: read <stdin>: p <0.001"}}
	var b strings.Builder
	if err := writeMarkdown(&b, s, m, run); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{`evil &lt;script>alert("d")&lt;/script>.`, "Source: a &lt;b>paper&lt;/b>.", "read &lt;stdin>: p <0.001",
		"&lt;/td>&lt;/tr>&lt;script>x&lt;/script>", "## Published reference numbers — a &lt;b>paper&lt;/b>"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<script") || strings.Contains(md, "<stdin>") || strings.Contains(md, "<b>") {
		t.Errorf("summary.md has raw HTML:\n%s", md)
	}
}

// The names in summary.md's headings and header come from study.yaml,
// which reaches the report unvalidated (decodeStudy): a datapath, a
// tuning and a workload named with Markdown in them render as written,
// in a heading, a "(tuning x)" title and the header's code spans.
func TestMarkdownEscapesNames(t *testing.T) {
	s := quickStudy(t)
	const dp, base = "[dp](javascript:x)", "*base`x*"
	s.Spec.Baseline = base
	for i := range s.Spec.Tunings {
		if s.Spec.Tunings[i].Name == "baseline" {
			s.Spec.Tunings[i].Name = base
		}
	}
	var smp []results.Sample
	for _, x := range quickSamples() {
		x.Cell.Datapath = dp
		if x.Cell.Tuning == "baseline" {
			x.Cell.Tuning = base
		}
		smp = append(smp, x)
	}
	md := markdownOf(t, s, analysis.Build(s, smp))
	mdHas(t, md, "## \\[dp\\](javascript:x) / tcp\n", "### Normalized bitrate (vs \\*base\\`x\\*)\n", "the baseline tuning ``*base`x*`` at")
	if regexp.MustCompile(`[^\\]\]\(javascript|\(vs \*base`).MatchString(md) {
		t.Errorf("a name's Markdown is live")
	}
	// One tuning: its name titles the metrics table.
	var one []results.Sample
	for _, x := range smp {
		if x.Cell.Tuning == base {
			one = append(one, x)
		}
	}
	md = markdownOf(t, s, analysis.Build(s, one))
	mdHas(t, md, "### Metrics (tuning \\*base\\`x\\*)\n")
	logIfFailed(t, md)
}
