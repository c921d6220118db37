// Package progress shows where a run is: a bar with the cell and trial and
// an ETA on a terminal, plain log lines otherwise (CI logs, pipes).
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Reporter receives progress events from a run.
type Reporter interface {
	// Begin announces the most trials the run will execute and, for a run
	// with a budget, when the budget ends (zero: none).
	Begin(total int, deadline time.Time)
	// Step reports that a trial finished; label says which.
	Step(label string)
	// Logf prints a line that must not garble the bar.
	Logf(format string, a ...any)
	// End closes the display.
	End()
}

// New picks a bar for terminals and plain lines for everything else.
func New(w io.Writer) Reporter {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &bar{w: w}
	}
	return &plain{w: w}
}

// nothingLeft is what a run with no trial left to run says at its start.
const nothingLeft = "no trial left to run: every cell has its trials"

type bar struct {
	w   io.Writer
	b   *progressbar.ProgressBar
	n   int
	tot int
}

// Begin: the bar predicts from its own rate; a budget's end shows in
// the plain lines only.
func (b *bar) Begin(total int, _ time.Time) {
	b.tot = total
	if total == 0 {
		// A resumed run with nothing left: a bar of no steps would show
		// 0/0 until the end; say it once instead.
		fmt.Fprintln(b.w, nothingLeft)
		return
	}
	b.b = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetDescription("starting"),
		progressbar.OptionClearOnFinish(),
	)
	_ = b.b.RenderBlank()
}

func (b *bar) Step(label string) {
	b.n++
	if b.b == nil {
		return
	}
	b.b.Describe(label)
	_ = b.b.Add(1)
}

func (b *bar) Logf(format string, a ...any) {
	if b.b != nil {
		_ = b.b.Clear()
	}
	fmt.Fprintf(b.w, format+"\n", a...)
	if b.b != nil {
		_ = b.b.RenderBlank()
	}
}

func (b *bar) End() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}

type plain struct {
	w               io.Writer
	n               int
	tot             int
	start, deadline time.Time
	now             func() time.Time
}

func (p *plain) Begin(total int, deadline time.Time) {
	if p.now == nil {
		p.now = time.Now
	}
	p.tot, p.start, p.deadline = total, p.now(), deadline
	// "up to": an adaptive run stops cells early, a budget or a given-up
	// cell cuts any run short; total is each cell's maximum.
	if total == 0 {
		fmt.Fprintln(p.w, nothingLeft)
		return
	}
	fmt.Fprintf(p.w, "running up to %d trials\n", total)
}

func (p *plain) Step(label string) {
	p.n++
	now := p.now()
	elapsed := now.Sub(p.start)
	eta := elapsed / time.Duration(p.n) * time.Duration(p.tot-p.n)
	if !p.deadline.IsZero() {
		// Every cell at its maximum would outlast the budget, which
		// ends the run first (an adaptive quick run said "eta 5m21s"
		// with two minutes of its budget left).
		eta = max(0, min(eta, p.deadline.Sub(now)))
	}
	fmt.Fprintf(p.w, "[%d/%d] %s (elapsed %s, eta %s)\n", p.n, p.tot, label,
		elapsed.Round(time.Second), eta.Round(time.Second))
}

func (p *plain) Logf(format string, a ...any) { fmt.Fprintf(p.w, format+"\n", a...) }

func (p *plain) End() {}
