package advise

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/markdown"
)

// WriteJSON writes the report as advice.json.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the report as advice.md.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# cnibench advise\n\nGenerated %s. Nothing was changed on the machine: every candidate is a proposal for review.\n\n",
		r.Generated.Format("2006-01-02 15:04 UTC"))
	b.WriteString("## What was found\n\n| what | value |\n|---|---|\n")
	for _, f := range r.Found {
		fmt.Fprintf(&b, "| %s | %s |\n", markdown.Cell(f.What), markdown.Cell(f.Value))
	}
	if len(r.Runs) > 0 {
		b.WriteString("\n## What the run showed\n\n")
		for _, p := range r.Partial {
			fmt.Fprintf(&b, "%s.\n\n", p)
		}
		for _, s := range r.Seen {
			fmt.Fprintf(&b, "- %s (%s): %s; %s.\n", s.Finding, s.Run, s.Text, s.AnswerText())
		}
		if len(r.Seen) == 0 {
			fmt.Fprintf(&b, "%s: %s.\n", strings.Join(r.Runs, ", "), nothingSeen())
		}
	}
	fmt.Fprintf(&b, "\n## Candidates (%d)\n\n", len(r.Candidates))
	if len(r.Candidates) == 0 {
		fmt.Fprintf(&b, "%s\n\n", r.NoCandidates())
	} else {
		b.WriteString("| rule | knob | measured effect | verdict |\n|---|---|---|---|\n")
		for _, c := range r.Candidates {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Name, markdown.Cell(knobText(c.Knobs)), markdown.Cell(c.Measured), markdown.Cell(c.VerdictText()))
		}
		b.WriteString("\n")
	}
	for _, c := range r.Candidates {
		fmt.Fprintf(&b, "### %s: %s\n\n", c.Name, c.Title)
		b.WriteString("**Why here:**\n\n")
		for _, w := range c.Why {
			fmt.Fprintf(&b, "- %s\n", w)
		}
		for _, s := range c.SeenLeaning(LeanFor) {
			fmt.Fprintf(&b, "- in the run %s: %s\n", s.Run, s.Text)
		}
		for _, h := range seenHeadings {
			if ss := c.SeenLeaning(h.Lean); len(ss) > 0 {
				fmt.Fprintf(&b, "\n**%s:**\n\n", h.Title)
				for _, s := range ss {
					fmt.Fprintf(&b, "- in the run %s: %s\n", s.Run, s.Text)
				}
			}
		}
		fmt.Fprintf(&b, "\n**Knob:** %s\n\n**Predicted effect:** %s\n\n**Evidence:**\n\n", knobText(c.Knobs), c.Effect)
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "- %s: %s\n", e.Source, e.Finding)
		}
		fmt.Fprintf(&b, "\n**Risk:** %s\n\n**Measured effect:** %s\n\n", c.Risk, c.Measured)
		if c.VerdictWhy != "" {
			fmt.Fprintf(&b, "**Verdict:** %s\n\n", c.VerdictText())
		}
		if t := ToDecide(c); t != "" {
			fmt.Fprintf(&b, "**To decide:** %s\n\n", t)
		}
		fmt.Fprintf(&b, "**To make it permanent** (review first; cnibench never applies it):\n\n")
		for _, p := range c.Permanent {
			head := p.Kind
			if p.Path != "" {
				head += " " + p.Path
			}
			fmt.Fprintf(&b, "%s:\n\n```\n%s\n```\n\n", head, strings.TrimRight(p.Text, "\n"))
		}
	}
	b.WriteString("## Rules that do not apply or cannot tell\n\n| rule | status | why |\n|---|---|---|\n")
	for _, o := range r.Listed() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", o.Name, o.Status, markdown.Cell(strings.Join(o.Why, "; ")))
	}
	if l := r.LeftOutLine(); l != "" {
		fmt.Fprintf(&b, "\n%s.\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// seenHeadings are where a candidate's sightings that are no reason
// for it go, apart from "Why here" (Sighting.Lean): a run whose
// decisions went against the candidate, or decided nothing, is said
// under its own heading, never as a reason.
var seenHeadings = []struct{ Lean, Title string }{
	{LeanAgainst, "In your run, against it"},
	{LeanMixed, "In your run, a trade-off"},
	{LeanUndecided, "In your run, undecided"},
	{LeanClientNode, "In your run, on the client node, which advise does not inspect"},
}

// ToDecide says, for an undecided candidate, why its cells stopped
// undecided and the rerun that would decide them by their estimates; ""
// otherwise.
func ToDecide(e Entry) string {
	if e.Verdict != Undecided || e.Proof == nil || e.Proof.Error != "" {
		return ""
	}
	var why []string
	for _, c := range e.Proof.Cells {
		if c.Stop != "" {
			why = append(why, fmt.Sprintf("%s stopped: %s", c.Where(), c.Stop))
		}
	}
	t := strings.Join(why, "; ")
	if r := e.Proof.Rerun; r != nil {
		if t != "" {
			t += ". "
		}
		t += fmt.Sprintf("Proving it alone with more trials would decide %d of the %d undecided cells by their estimates: "+
			"cnibench advise --prove %s (about %s of trials; such estimates decide %s of cells in simulation, docs/statistics.md)",
			r.Cells, r.Undecided, cmdline.Quote(r.Args), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second), adaptive.ToDecideCalibration)
	}
	return t
}

// knobText is a knob list in one line: "rfs on eth0: rps_cpus=3, ...".
func knobText(ks []Knob) string {
	var parts []string
	for _, k := range ks {
		s := k.Kind
		if k.Device != "" {
			s += " on " + k.Device
		}
		var ps []string
		for _, p := range sortedKeys(k.Params) {
			ps = append(ps, p+"="+k.Params[p])
		}
		if len(ps) > 0 {
			s += ": " + strings.Join(ps, ", ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

var page = template.Must(template.New("advice").Funcs(template.FuncMap{"knobs": knobText, "join": strings.Join, "todecide": ToDecide, "nothing": nothingSeen,
	"leanFor": func() string { return LeanFor }, "headings": func() any { return seenHeadings }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cnibench advise</title>
<style>
body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#eee}pre{background:#f4f4f4;padding:.6em;overflow-x:auto}.np{color:#a60}
section{border-top:1px solid #ccc;margin-top:1.5em}
</style></head><body>
<h1>cnibench advise</h1>
<p>Generated {{.Generated.Format "2006-01-02 15:04 UTC"}}. Nothing was changed on the machine: every candidate is a proposal for review.</p>
<h2>What was found</h2>
<table><tr><th>what</th><th>value</th></tr>
{{range .Found}}<tr><td>{{.What}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
{{if .Runs}}<h2>What the run showed</h2>
{{range .Partial}}<p>{{.}}.</p>{{end}}
{{if .Seen}}<ul>{{range .Seen}}<li>{{.Finding}} ({{.Run}}): {{.Text}}; {{.AnswerText}}.</li>{{end}}</ul>{{else}}<p>{{join .Runs ", "}}: {{nothing}}.</p>{{end}}{{end}}
<h2>Candidates ({{len .Candidates}})</h2>
{{if not .Candidates}}<p>{{.NoCandidates}}</p>{{else}}
<table><tr><th>rule</th><th>knob</th><th>measured effect</th><th>verdict</th></tr>
{{range .Candidates}}<tr><td><a href="#{{.Name}}">{{.Name}}</a></td><td>{{knobs .Knobs}}</td><td class="np">{{.Measured}}</td><td class="np">{{.VerdictText}}</td></tr>
{{end}}</table>{{end}}
{{range .Candidates}}<section id="{{.Name}}"><h3>{{.Name}}: {{.Title}}</h3>
<p><b>Why here:</b></p><ul>{{range .Why}}<li>{{.}}</li>{{end}}{{range .SeenLeaning leanFor}}<li>in the run {{.Run}}: {{.Text}}</li>{{end}}</ul>
{{$e := .}}{{range $h := headings}}{{with $e.SeenLeaning $h.Lean}}<p><b>{{$h.Title}}:</b></p><ul>{{range .}}<li>in the run {{.Run}}: {{.Text}}</li>{{end}}</ul>{{end}}{{end}}
<p><b>Knob:</b> {{knobs .Knobs}}</p>
<p><b>Predicted effect:</b> {{.Effect}}</p>
<p><b>Evidence:</b></p><ul>{{range .Evidence}}<li>{{.Source}}: {{.Finding}}</li>{{end}}</ul>
<p><b>Risk:</b> {{.Risk}}</p>
<p><b>Measured effect:</b> <span class="np">{{.Measured}}</span></p>
{{if .VerdictWhy}}<p><b>Verdict:</b> {{.VerdictText}}</p>{{end}}
{{with todecide .}}<p><b>To decide:</b> {{.}}</p>{{end}}
<p><b>To make it permanent</b> (review first; cnibench never applies it):</p>
{{range .Permanent}}<p>{{.Kind}}{{if .Path}} <code>{{.Path}}</code>{{end}}</p><pre>{{.Text}}</pre>
{{end}}</section>
{{end}}
<h2>Rules that do not apply or cannot tell</h2>
<table><tr><th>rule</th><th>status</th><th>why</th></tr>
{{range .Listed}}<tr><td>{{.Name}}</td><td>{{.Status}}</td><td>{{join .Why "; "}}</td></tr>
{{end}}</table>
{{with .LeftOutLine}}<p>{{.}}.</p>{{end}}
</body></html>
`))

// WriteHTML writes the report as advice.html, one self-contained page.
func (r *Report) WriteHTML(w io.Writer) error { return page.Execute(w, r) }

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Files written by WriteDir.
const (
	FileMarkdown   = "advice.md"
	FileHTML       = "advice.html"
	FileJSON       = "advice.json"
	FileInspection = "inspection.json"
)

// WriteDir writes the three pages and the raw inspection into dir,
// creating it.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("advise output: %w", err)
	}
	writers := []struct {
		name  string
		write func(io.Writer) error
	}{
		{FileMarkdown, r.WriteMarkdown},
		{FileHTML, r.WriteHTML},
		{FileJSON, r.WriteJSON},
		{FileInspection, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(r.Inspection)
		}},
	}
	for _, x := range writers {
		f, err := os.Create(filepath.Join(dir, x.name))
		if err != nil {
			return fmt.Errorf("advise output: %w", err)
		}
		err = x.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", x.name, err)
		}
	}
	return nil
}
