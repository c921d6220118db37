package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// report.html shows a message's backtick-quoted command as code, as
// summary.md renders it, and escapes the rest.
func TestProse(t *testing.T) {
	got := string(prose("resume: `cnibench run --resume` on <dir> & `unclosed"))
	if want := "resume: <code>cnibench run --resume</code> on &lt;dir&gt; &amp; `unclosed"; got != want {
		t.Errorf("prose = %q, want %q", got, want)
	}
}

// The page's header ends a description and a source with one '.', as
// summary.md does, whether or not study.yaml's ends with one, and a run
// without a run ID (env.json missing) leaves no stray ". ".
func TestHeaderOneFullStop(t *testing.T) {
	s := quickStudy(t)
	s.Metadata.Description, s.Metadata.Source = "Steering on VXLAN.", "seed 000."
	var b strings.Builder
	if err := writeHTML(&b, &results.Run{}, s, analysis.Build(s, nil)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `<p class="meta">Steering on VXLAN. Source: seed 000. Report generated`) || strings.Contains(page, "..") {
		t.Errorf("header: %s", page[strings.Index(page, `<p class="meta">`):][:120])
	}
}

// The jitter figure's caption says what jitter is, not how the loss
// figure's percentage is computed.
func TestUDPCaptions(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	var loss, jitter string
	for _, f := range allFigures(buildWorkloads(s, analysis.Build(s, samples), samples)) {
		switch {
		case strings.HasPrefix(f.Title, "UDP lost datagrams"):
			loss = f.Caption
		case strings.HasPrefix(f.Title, "UDP jitter"):
			jitter = f.Caption
		}
	}
	if !strings.Contains(loss, "loss % is lost / (received + lost)") || strings.Contains(jitter, "loss") ||
		!strings.HasPrefix(jitter, "jitter at the receiver over the measured window (ms): mean over trials") {
		t.Errorf("loss caption %q, jitter caption %q", loss, jitter)
	}
}

// The glance's caption points to "Repetitions and decisions" only when
// the pages have that table: a run of fixed trials keeps no stops.json.
func TestGlanceCaptionStops(t *testing.T) {
	m := analysis.Model{Baseline: "baseline"}
	if c := glanceCaption(m); strings.Contains(c, "Repetitions and decisions") || !strings.HasSuffix(c, "give each interval, n and p.") {
		t.Errorf("without stops: %s", c)
	}
	m.Stops = []results.Stop{{Cell: results.Cell{Datapath: "host", Tuning: "rfs", Workload: "tcp", Replicas: 1}, N: 3, Decision: "better"}}
	if c := glanceCaption(m); !strings.HasSuffix(c, "; \"Repetitions and decisions\" says why each cell stopped.") {
		t.Errorf("with stops: %s", c)
	}
	if got := missingWhy(nil, nil); strings.Contains(got, "Repetitions and decisions") {
		t.Errorf("cells without samples of a run without stops: %s", got)
	}
}

// A study that lists no published numbers (workloads) is not said to
// have published numbers measured elsewhere, in either page.
func TestComparabilityWithoutReferences(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	if len(s.Spec.Reference) != 0 {
		t.Fatalf("the workloads study lists %d published numbers", len(s.Spec.Reference))
	}
	run := &results.Run{Samples: samples, HasEnv: true}
	m := analysis.Build(s, samples)
	var md, page strings.Builder
	if err := writeMarkdown(&md, s, m, run); err != nil {
		t.Fatal(err)
	}
	if err := writeHTML(&page, run, s, m); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"summary.md": md.String(), "report.html": page.String()} {
		if strings.Contains(text, "The published numbers were measured") || strings.Contains(text, "Comparability with the paper") ||
			!strings.Contains(text, "Comparability with other measurements") || !strings.Contains(text, "The study lists no published numbers. Here the nodes") {
			t.Errorf("%s's comparability of a study without published numbers is wrong", name)
		}
	}
	// With them, as before.
	q := quickStudy(t)
	if l := comparability(run, q); !strings.HasPrefix(l[0], "The published numbers were measured on real hosts") || comparabilityHeading(q) != "Comparability with the paper" {
		t.Errorf("a study with published numbers: %q", l[0])
	}
}
