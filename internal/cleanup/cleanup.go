// Package cleanup undoes what dead cnibench runs left on the machine
// (`cnibench cleanup`).
//
// Design notes:
//
//   - A run's journal (package journal) lists every value it changed and
//     every namespace, link, process and state directory it made. For each
//     journal whose owner is dead, cleanup reverts the values (newest
//     first, only where the value is still the run's), kills the run's
//     processes, deletes its namespaces, host links and state directory
//     (journal.StateDir below the journal's own directory, where the
//     run made it), and removes the journal.
//   - Objects are journaled before they exist, so a journal knows all its
//     run made. Namespaces named PREFIX<run>-* whose run has no journal in
//     the directory (removed by hand, lost, or kept elsewhere: a run or a
//     test with its own journal directory) are only a guess: cleanup
//     reports them and sweeps them (processes killed, namespaces deleted;
//     likewise state directories of runs without a live owner or journal)
//     only when asked, with Orphans or by naming the run.
//   - Cleanup holds the host lock (journal.LockDir, and the machine's,
//     journal.LockHost) while it works, so no run starts meanwhile (a
//     dry run holds the directory's shared, and only peeks at journal
//     locks); journals are replayed newest first by when they were
//     opened, and a value is restored only while it still holds what the
//     run wrote (compare before swap; see tune.RevertReplayOutcomes). A
//     value whose file vanished while its namespace lives (a sysctl of an
//     unloaded module, a queue the device lost) is gone: nothing to
//     restore.
//   - A dead run's damaged journal (a line before the last unreadable:
//     corruption, not a crash) is replayed as far as it can be read, then
//     set aside as PATH.corrupt with the unreadable lines shown and an
//     error: what they recorded must be checked by hand.
//   - Never touch anything whose name lacks the prefix, and never a run
//     whose journal owner is alive.
//   - A probe's scratch namespace (probe.ScratchName: cnbprobe-PID-START-TAG)
//     is not journaled; its name proves its prober alive or dead, and
//     cleanup deletes it once the prober is gone, in every mode.
//   - Namespaces and state directories are listed before journals are
//     read: a run writes its journal before its first namespace or
//     directory, so one seen in the list belongs to a journal that is
//     already on disk when it is read.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/nsprocs"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/tune"
)

// hostLockPath is the machine's lock (journal.HostLockPath; tests use
// their own).
var hostLockPath = journal.HostLockPath

// DefaultPrefix is the prefix of everything cnibench creates.
const DefaultPrefix = "cnb-"

// Options configure Run.
type Options struct {
	// JournalDir holds the journals (default journal.DefaultDir).
	JournalDir string
	// DirsRecord, when set, is the machine's record of journal
	// directories (journal.DirsRecord): the dead runs' journals of every
	// directory it names are replayed too, newest first across all
	// (`cnibench cleanup` without --journal-dir).
	DirsRecord string
	// Prefix of namespace and host link names (default "cnb-").
	Prefix string
	// DryRun reports what would be done and changes nothing.
	DryRun bool
	// Run limits cleanup to one run ID (empty: every dead run). Naming a
	// run also sweeps its namespaces and state directory when it has no
	// journal.
	Run string
	// Orphans sweeps namespaces and state directories of every run that
	// has no journal in the replayed directories (JournalDir, and those
	// DirsRecord names) and no live owner; without it (and without Run)
	// they are only reported. State directories are looked for below
	// each replayed directory, where its runs made them.
	Orphans bool
	// FS reaches the knobs (default tune.LocalFS).
	FS tune.FS
	// KillTimeout bounds the wait for killed processes (default 5s).
	KillTimeout time.Duration
	// Undoing, when set, is told the path of the dead run's journal
	// cleanup is about to undo, and its return is called once that run
	// is done: a signal arriving meanwhile must know that this process
	// holds a journal, though not one of its own (a third signal exits
	// 3, naming it).
	Undoing func(path string) (done func())
}

// Action kinds.
const (
	ActRevert  = "revert"
	ActKill    = "kill"
	ActNetns   = "delete-netns"
	ActLink    = "delete-link"
	ActDir     = "remove-dir"
	ActJournal = "remove-journal"
	ActSkip    = "skip"
	ActKeep    = "keep-journal"
	ActLiveRun = "live-run"
	// ActDamaged is an unreadable line of a damaged journal; ActSetAside
	// the journal moved aside once what could be read was undone.
	ActDamaged  = "damaged-line"
	ActSetAside = "set-aside-journal"
)

// Action is one thing cleanup did (or, in a dry run, would do).
type Action struct {
	Run    string
	Kind   string
	Object string
	Detail string
}

func (a Action) String() string {
	s := fmt.Sprintf("run %s: %s %s", a.Run, a.Kind, a.Object)
	if a.Detail != "" {
		s += " (" + a.Detail + ")"
	}
	return s
}

// Report lists what was done, in order.
type Report struct {
	DryRun  bool
	Actions []Action
}

func (r *Report) add(run, kind, object, detail string) {
	r.Actions = append(r.Actions, Action{Run: run, Kind: kind, Object: object, Detail: detail})
}

// Run cleans up after dead runs; see the package notes. It carries on past
// failures and returns them all joined; a journal whose undo failed is
// kept for the next cleanup, a *KeptError. When ctx ends (a signal) it
// stops between runs, never inside one (stale), and between swept
// namespaces: the runs it did not reach are kept too, each a *KeptError,
// so that the command does not exit as if everything were undone.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.JournalDir == "" {
		opts.JournalDir = journal.DefaultDir
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.FS == nil {
		opts.FS = tune.LocalFS{}
	}
	if opts.KillTimeout <= 0 {
		opts.KillTimeout = nsprocs.DefaultTimeout
	}
	c := &cleaner{opts: opts, rep: Report{DryRun: opts.DryRun}, handled: map[string]bool{}, fs: &vanishedFS{FS: opts.FS}, revertQdisc: impair.Revert}
	c.replayFS = c.fs
	if opts.DryRun {
		c.replayFS = tune.DryRun(c.fs)
	}
	c.dirs = c.journalDirs()
	lock, err := c.lock()
	if err != nil {
		return c.rep, err
	}
	defer lock.Release()

	names, err := netns.List(opts.Prefix)
	if err != nil {
		return c.rep, fmt.Errorf("list namespaces: %w", err)
	}
	dirs, err := stateDirs(c.dirs, opts.JournalDir)
	c.fail(err)
	stale, err := journal.DeadIn(c.dirs, opts.DryRun)
	c.fail(err)
	withJournal := map[string]bool{}
	for _, r := range stale {
		withJournal[r.Header.RunID] = true
		if opts.Run != "" && r.Header.RunID != opts.Run {
			r.Release()
			continue
		}
		if ctx.Err() != nil {
			// Stopped between runs: this one is left whole for the
			// next cleanup, and said to be left (a dry run changes
			// nothing either way).
			if opts.DryRun {
				r.Release()
			} else {
				c.keep(r, "cleanup was stopped before this run")
			}
			continue
		}
		done := func() {}
		if opts.Undoing != nil && !opts.DryRun {
			done = opts.Undoing(r.Path)
		}
		c.stale(r, names)
		done()
	}
	if err := ctx.Err(); err != nil {
		c.fail(err)
		return c.rep, errors.Join(c.errs...)
	}
	live, err := c.live()
	if err != nil {
		c.fail(err)
		return c.rep, errors.Join(c.errs...)
	}
	c.sweep(ctx, names, live, withJournal)
	c.sweepDirs(dirs, live, withJournal)
	c.sweepProbes(ctx)
	c.sweepTemps()
	c.fail(ctx.Err())
	return c.rep, errors.Join(c.errs...)
}

// ProbeRun is the Action.Run of a probe's scratch namespace, which belongs
// to no run.
const ProbeRun = "(probe)"

// sweepProbes deletes the scratch namespaces of probes whose process is
// gone (a doctor or run killed with kill -9 while probing). Their names
// carry the prober's pid and start time (probe.ScratchName), which proves
// it dead as a journal would, so they go in every mode (with --run too:
// they are no run's). A scratch namespace without them (an older
// cnibench's) is only reported, unless --orphans.
func (c *cleaner) sweepProbes(ctx context.Context) {
	names, err := netns.List(probe.NamespacePrefix)
	if err != nil {
		c.fail(fmt.Errorf("list probe namespaces: %w", err))
		return
	}
	for _, n := range names {
		if ctx.Err() != nil {
			return // stopped: the rest waits for the next cleanup
		}
		pid, start, ok := probe.ParseScratchName(n)
		switch {
		case !ok && !c.opts.Orphans:
			c.rep.add(ProbeRun, ActSkip, "netns "+n, "a probe namespace without its prober's pid; --orphans removes it")
		case !ok:
			c.deleteNetns(ProbeRun, n, "orphaned probe namespace")
		case journal.ProcessAlive(pid, start):
			// Its probe is still running and deletes it itself.
		default:
			c.deleteNetns(ProbeRun, n, fmt.Sprintf("its prober, pid %d, is gone", pid))
		}
	}
}

type cleaner struct {
	opts Options
	// dirs are the journal directories replayed: JournalDir first, then
	// those DirsRecord names.
	dirs    []string
	rep     Report
	errs    []error
	handled map[string]bool // namespaces and directories already dealt with
	// fs is opts.FS, a value file that vanished counting as gone;
	// replayFS is fs, or in a dry run fs seen through one
	// tune.DryRunFS for all journals: an older run's entry finds the
	// value a newer run's would-restore would have put back, as the
	// real cleanup does.
	fs       *vanishedFS
	replayFS tune.FS
	// revertQdisc is impair.Revert (tests fail it).
	revertQdisc func(impair.Prev) error
}

// lock takes the host lock: exclusively, so that no run starts (and
// journals values as "old") while their undo is in flight and no second
// cleanup interleaves; for a dry run shared, so that no run or cleanup
// starts while it reads (it holds no journal's lock, journal.Dead's peek,
// so a dead run's journal never looks alive to them). A dry run beside a
// live run or cleanup, which hold the lock, reads without it.
//
// A cleanup that changes things also takes the machine's lock
// (journal.HostLockPath), as a local run does: it writes the machine's
// values back, which a run of another journal directory may be tuning.
func (c *cleaner) lock() (*journal.Lock, error) {
	if !c.opts.DryRun {
		var held *journal.Lock
		for _, d := range c.dirs {
			l, err := journal.LockDir(d)
			if err != nil {
				held.Release()
				return nil, err
			}
			held = held.With(l)
		}
		h, err := journal.LockHost(hostLockPath)
		if err != nil {
			held.Release()
			return nil, err
		}
		return held.With(h), nil
	}
	var held *journal.Lock
	for _, d := range c.dirs {
		l, err := journal.LockShared(d)
		if be := (*journal.BusyError)(nil); errors.As(err, &be) {
			continue
		}
		if err != nil {
			held.Release()
			return nil, err
		}
		held = held.With(l)
	}
	return held, nil
}

func (c *cleaner) fail(err error) {
	if err != nil {
		c.errs = append(c.errs, err)
	}
}

// RunOf returns the run part of a prefixed name: PREFIX<run>-...
func RunOf(name, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return "", false
	}
	run, _, _ := strings.Cut(rest, "-")
	return run, run != ""
}

// sweep deletes prefixed namespaces whose run has no journal at all.
func (c *cleaner) sweep(ctx context.Context, names []string, live, withJournal map[string]bool) {
	for _, n := range names {
		if ctx.Err() != nil {
			return // stopped: the rest waits for the next cleanup
		}
		run, ok := RunOf(n, c.opts.Prefix)
		if !ok || c.handled[n] || (c.opts.Run != "" && run != c.opts.Run) {
			continue
		}
		if live[run] {
			if c.opts.Run != "" {
				c.rep.add(run, ActLiveRun, n, "its run is alive; not touched")
			}
			continue
		}
		if withJournal[run] {
			continue // its journal is kept for the next cleanup
		}
		if !netns.Exists(n) && !netns.HalfMade(n) {
			continue
		}
		if !c.sweeping() {
			c.rep.add(run, ActSkip, "netns "+n, c.orphanNote())
			continue
		}
		c.deleteNetns(run, n, "no journal")
	}
}

// sweepDirs removes state directories whose run has no journal at all and
// no live owner, as sweep does for namespaces.
func (c *cleaner) sweepDirs(found []stateDir, live, withJournal map[string]bool) {
	for _, d := range found {
		run, path := d.run, d.path
		if (c.opts.Run != "" && run != c.opts.Run) || withJournal[run] {
			continue
		}
		if live[run] {
			if c.opts.Run != "" {
				c.rep.add(run, ActLiveRun, path, "its run is alive; not touched")
			}
			continue
		}
		if !c.sweeping() {
			c.rep.add(run, ActSkip, "dir "+path, c.orphanNote())
			continue
		}
		c.removeDir(run, path, "no journal")
	}
}

// sweeping reports whether runs without a journal are swept: asked for
// all of them (Orphans) or for one by name (Run, which sweep and
// sweepDirs have already matched).
func (c *cleaner) sweeping() bool { return c.opts.Orphans || c.opts.Run != "" }

// orphanNote says why a journal-less run's leftover was left alone.
func (c *cleaner) orphanNote() string {
	return "no journal in " + strings.Join(c.dirs, ", ") + ": maybe a run or test journaling elsewhere; --orphans (or --run RUN) removes it"
}
