package runner

import (
	"context"
	"time"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// DryRun is what a run would do, found without building anything: the
// study's cells and machine time (study.Plan), its repetition design,
// and what the engine's preflight found. Its probes may load kernel
// modules (HostChanges).
type DryRun struct {
	Plan   study.Planned
	Design string
	Engine string
	// Notes and Warnings are the preflight's, as a run would log them.
	Notes, Warnings []string
	// HostChanges are what the preflight's probes changed on this host
	// (kernel modules they made the kernel load: probe.HostChanges);
	// empty when it changed nothing.
	HostChanges []string
}

// Check runs the preflight of opt's study, which builds nothing (its
// probes may load modules: HostChanges), and says what the run would do (cnibench run --dry-run). A problem is a
// PreflightError, as Run's; with it comes the plan and design of the
// study as given (Engine set), so a refused dry run still says what the
// study is, and Engine is empty when no engine could be made.
func Check(ctx context.Context, opt Options) (DryRun, error) {
	e, err := newEngine(opt)
	if err != nil {
		return DryRun{}, &PreflightError{err}
	}
	p, err := preflight(ctx, e, opt.Study)
	// The plan (nil when refused) is the machine's CPUs, on which the
	// budget check finds the cells it holds (hold.go).
	r := &run{study: opt.Study, design: newDesign(opt.Study), opt: opt, began: time.Now(), plan: p}
	d := DryRun{Plan: opt.Study.Plan(), Design: r.describe(), Engine: e.Name(), HostChanges: probe.HostChanges()}
	if err != nil {
		return d, err
	}
	if opt.OutDir != "" {
		if err := CheckOut(opt.OutDir); err != nil {
			return d, err
		}
	}
	d.Notes, d.Warnings = p.notes, p.warnings
	if msg := r.shortAtStart(); msg != "" {
		d.Warnings = append(d.Warnings, msg)
	}
	return d, nil
}
