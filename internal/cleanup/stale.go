package cleanup

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/nsprocs"
	"github.com/cnibench/cnibench/internal/tune"
)

// stale undoes one dead run's journal: values, processes, namespaces,
// host links, the state directory, in that order, then removes the
// journal if all went well. It takes no context: once begun, a run's
// undo goes to its end whatever signal comes (Run stops between runs),
// as one stopped half-way would keep a journal whose processes were
// SIGKILLed but not waited for and whose namespaces were left; every
// wait in it is bounded (Options.KillTimeout).
func (c *cleaner) stale(r *journal.Replay, listed []string) {
	run := r.Header.RunID
	prefix := r.Header.Prefix
	if prefix == "" || !strings.HasPrefix(prefix, c.opts.Prefix) {
		// Never trust a journal to widen what may be touched.
		prefix = c.opts.Prefix
	}
	nerr := len(c.errs)
	if r.FromEarlierBoot() {
		c.earlierBoot(r, nerr)
		return
	}
	if r.Truncated {
		c.rep.add(run, ActSkip, r.Path, "a last line cut by the crash was ignored: the change it recorded was not yet made, or was already undone")
	}
	for _, d := range r.Damaged {
		c.rep.add(run, ActDamaged, fmt.Sprintf("%s line %d", r.Path, d.Line),
			fmt.Sprintf("unreadable (%v): %s; what it recorded, if anything, is not undone: check it by hand", d.Err, d.Quoted()))
	}

	outs, err := tune.RevertReplayOutcomes(r, c.replayFS, c.opts.DryRun)
	c.fail(err)
	for _, o := range outs {
		ns := o.Set.Netns
		if ns == "" {
			ns = "host"
		}
		if o.Action == tune.Gone && c.fs.vanished(o.Set.Netns, o.Set.FS, o.Set.Path) {
			c.rep.add(run, ActRevert, ns+":"+o.Set.Path, fmt.Sprintf("%s: its file no longer exists though its namespace does (a sysctl whose module was unloaded, a queue the device no longer has): nothing to restore; old %q, run wrote %q", o.Action, o.Set.Old, o.Set.New))
			continue
		}
		c.rep.add(run, ActRevert, ns+":"+o.Set.Path, fmt.Sprintf("%s; old %q, run wrote %q, found %q", o.Action, o.Set.Old, o.Set.New, o.Now))
	}
	c.revertQdiscs(run, r)

	var procs []nsprocs.Proc
	var nss, links, dirs []journal.Object
	for _, e := range r.Pending() {
		o := e.Object
		switch {
		case o == nil:
		case o.Kind == journal.KindProcess:
			if processAlive(o.PID, o.Start) {
				procs = append(procs, nsprocs.Proc{PID: o.PID, Start: o.Start})
				c.rep.add(run, ActKill, fmt.Sprintf("pid %d", o.PID), o.Name)
			}
		case o.Kind == journal.KindNetns:
			nss = append(nss, *o)
		case o.Kind == journal.KindLink:
			links = append(links, *o)
		case o.Kind == journal.KindDir:
			dirs = append(dirs, *o)
		}
	}
	if len(procs) > 0 && !c.opts.DryRun {
		c.fail(killer().Kill(procs, c.opts.KillTimeout))
	}

	// The run's namespaces: recorded ones, and any named PREFIX<run>-*.
	seen := map[string]bool{}
	var names []string
	for _, o := range nss {
		if !strings.HasPrefix(o.Name, prefix) {
			c.rep.add(run, ActSkip, "netns "+o.Name, "name lacks prefix "+prefix+"; not touched")
			continue
		}
		if !seen[o.Name] {
			seen[o.Name] = true
			names = append(names, o.Name)
		}
	}
	for _, n := range listed {
		if r, ok := RunOf(n, c.opts.Prefix); ok && r == run && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	// Newest first, as they were journaled.
	for i := len(names) - 1; i >= 0; i-- {
		if netns.Exists(names[i]) || netns.HalfMade(names[i]) {
			c.deleteNetns(run, names[i], "journaled")
		}
	}
	for i := len(links) - 1; i >= 0; i-- {
		c.deleteLink(run, links[i], prefix)
	}
	c.staleDirs(run, filepath.Dir(r.Path), dirs)
	if len(c.errs) > nerr && !c.opts.DryRun {
		// Kept for the next cleanup: the values put back are marked,
		// so that it does not judge them again.
		c.fail(r.MarkDone(settled(outs)))
	}
	c.finish(r, nerr)
}

// settled are the journal entries of outs that are done with: put back,
// found back, gone, or left to someone else's change.
func settled(outs []tune.Outcome) []int {
	var seqs []int
	for _, o := range outs {
		if o.Action != tune.Planned {
			seqs = append(seqs, o.Seq)
		}
	}
	return seqs
}

// earlierBoot retires the journal of a run of an earlier boot (one kept
// in a --journal-dir that survives reboots): its values, processes,
// namespaces, links and qdiscs went with the reboot, and writing its old
// values back would overwrite this boot's. Only its directories, on
// disk, are still there to remove.
func (c *cleaner) earlierBoot(r *journal.Replay, nerr int) {
	run := r.Header.RunID
	c.rep.add(run, ActSkip, r.Path, "from an earlier boot: nothing to revert (its values, processes and namespaces went with the reboot)")
	var dirs []journal.Object
	for _, e := range r.Pending() {
		if e.Object != nil && e.Object.Kind == journal.KindDir {
			dirs = append(dirs, *e.Object)
		}
	}
	c.staleDirs(run, filepath.Dir(r.Path), dirs)
	c.finish(r, nerr)
}

// finish removes a dead run's journal once undone, keeps it when some
// undo failed (nerr: the errors before this run's), sets it aside when
// damaged; a dry run keeps it.
func (c *cleaner) finish(r *journal.Replay, nerr int) {
	run := r.Header.RunID
	switch {
	case c.opts.DryRun && len(r.Damaged) > 0:
		r.Release()
		c.rep.add(run, ActSetAside, r.Path, "dry run: kept; cleanup would set it aside as "+r.Path+journal.CorruptExt)
	case c.opts.DryRun:
		r.Release()
		c.rep.add(run, ActJournal, r.Path, "dry run: kept")
	case len(c.errs) > nerr:
		c.keep(r, "some undo failed")
	case len(r.Damaged) > 0:
		c.setAside(r)
	default:
		c.fail(r.Remove())
		c.rep.add(run, ActJournal, r.Path, "")
	}
}

// KeptError is a dead run's journal that cleanup left in place, so that
// changes of the run may still be on the machine: an undo failed, or
// cleanup was stopped before it reached the run. The command exits 3
// for it, as a run does whose teardown kept its journal: 128+N (stopped,
// everything undone) or 1 would say nothing is left.
type KeptError struct {
	Run, Path string
	// Why it was kept.
	Why string
	// Cleanup is the command that tries again (journal.CleanupFor).
	Cleanup string
}

func (e *KeptError) Error() string {
	return fmt.Sprintf("journal %s of run %s kept (%s): its changes may be left; run %s again", e.Path, e.Run, e.Why, e.Cleanup)
}

// keep leaves a dead run's journal for the next cleanup and fails this
// one with a *KeptError.
func (c *cleaner) keep(r *journal.Replay, why string) {
	r.Release()
	c.rep.add(r.Header.RunID, ActKeep, r.Path, why+"; run cleanup again")
	c.fail(&KeptError{Run: r.Header.RunID, Path: r.Path, Why: why, Cleanup: journal.CleanupFor(filepath.Dir(r.Path))})
}

// setAside moves a damaged journal out of the way once what could be read
// of it is undone, and fails the cleanup with what the operator must
// still check: cleanup cannot tell what its unreadable lines recorded.
func (c *cleaner) setAside(r *journal.Replay) {
	to, err := r.SetAside()
	if err != nil {
		c.fail(err)
		return
	}
	c.rep.add(r.Header.RunID, ActSetAside, r.Path, "damaged; set aside as "+to+", no longer a journal: runs are not refused for it")
	c.fail(fmt.Errorf("journal %s of run %s was damaged: cleanup undid what it could read and set it aside as %s; "+
		"what %s recorded is unknown: check by hand that nothing of it is left on the host (a sysctl or device value, a qdisc, a process, a namespace %s*), then remove %s",
		r.Path, r.Header.RunID, to, r.DamagedLines(), r.Header.Prefix+r.Header.RunID, to))
}

// deleteNetns kills everything inside a namespace and deletes it. A
// half-made one (a file no namespace is bound to: its creation was killed
// half-way) holds no processes and is only removed.
func (c *cleaner) deleteNetns(run, name, why string) {
	c.handled[name] = true
	if netns.HalfMade(name) {
		why += "; a half-made namespace file, no namespace bound to it"
		if !c.opts.DryRun {
			if err := netns.Delete(name); err != nil {
				c.fail(err)
				return
			}
		}
		c.rep.add(run, ActNetns, name, why)
		return
	}
	if c.opts.DryRun {
		ps, err := nsprocs.In(name)
		c.fail(err)
		for _, p := range ps {
			c.rep.add(run, ActKill, fmt.Sprintf("pid %d", p.PID), "in netns "+name)
		}
		c.rep.add(run, ActNetns, name, why)
		return
	}
	ps, err := killer().KillAllIn(name, c.opts.KillTimeout)
	for _, p := range ps {
		c.rep.add(run, ActKill, fmt.Sprintf("pid %d", p.PID), "in netns "+name)
	}
	if err != nil {
		c.fail(err)
		return
	}
	if err := netns.Delete(name); err != nil {
		c.fail(err)
		return
	}
	c.rep.add(run, ActNetns, name, why)
}

// deleteLink deletes a journaled link on the host. A link inside a
// namespace went with it, or belongs to a namespace that is not the run's.
// Equivalent to: ip link delete NAME
func (c *cleaner) deleteLink(run string, o journal.Object, prefix string) {
	obj := "link " + o.Name
	if o.Netns != "" {
		if !netns.Exists(o.Netns) || c.handled[o.Netns] {
			return // gone with its namespace, or goes with it
		}
		c.rep.add(run, ActSkip, obj, "in netns "+o.Netns+", which is not the run's; not touched")
		return
	}
	if !strings.HasPrefix(o.Name, prefix) {
		c.rep.add(run, ActSkip, obj, "name lacks prefix "+prefix+"; not touched")
		return
	}
	h, err := netns.Handle("")
	if err != nil {
		c.fail(err)
		return
	}
	defer h.Close()
	l, err := h.LinkByName(o.Name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return
	}
	if err != nil {
		c.fail(fmt.Errorf("find link %s: %w", o.Name, err))
		return
	}
	if !c.opts.DryRun {
		if err := h.LinkDel(l); err != nil {
			c.fail(fmt.Errorf("ip link delete %s: %w", o.Name, err))
			return
		}
	}
	c.rep.add(run, ActLink, o.Name, "on the host")
}
