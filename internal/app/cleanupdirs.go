package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/prove"
	"github.com/cnibench/cnibench/internal/runner"
)

// dirsRecord is the machine's record of journal directories
// (journal.DirsRecord) and lockMachine takes the machine's lock for a
// run (tests replace both).
var (
	dirsRecord  = journal.DirsRecord
	lockMachine = runner.LockMachine
)

// beginRun takes jdir's lock, refusing while a dead run's journal is
// in it (journal.BeginRun), then the machine's (claimMachine), and
// returns both as one lock; opt.MachineLocked says runner.Run holds it.
// The refusal names opt.Cleanup, a kube run's cleanup --kube (its
// directory's journals are the cluster's), else the cleanup of jdir
// (journal.CleanupFor: --journal-dir DIR but for the default
// directory): plain `cnibench cleanup` does nothing for either, and
// the refusal came back after it. opt.Cleanup is set to it: the run's
// kept journal and the signal hints name the same.
func beginRun(opt *runner.Options, jdir string) (*journal.Lock, error) {
	opt.Cleanup = cmp.Or(opt.Cleanup, journal.CleanupFor(jdir))
	lock, err := journal.BeginRun(jdir, opt.Cleanup)
	if err != nil {
		return nil, err
	}
	host, err := claimMachine(*opt, jdir)
	if err != nil {
		lock.Release()
		return nil, err
	}
	opt.MachineLocked = host != nil
	return lock.With(host), nil
}

// claimMachine takes the machine's lock for a run of opt's engine (nil
// for a kube run whose nodes run on other kernels: it changes nothing
// here), records jdir as a journal directory in use and refuses, lock
// released, while another recorded directory holds a dead run's journal:
// its changes are the old values this run would journal
// (journal.DeadElsewhere). BeginRun has refused for jdir's own already.
// A kube run's directory holds controller journals, whose changes are
// the cluster's: it is never recorded, as the local cleanup replays the
// recorded directories against this machine.
func claimMachine(opt runner.Options, jdir string) (*journal.Lock, error) {
	l, err := lockMachine(opt)
	if err != nil || l == nil {
		return l, err
	}
	if opt.Engine != "kube" {
		err = journal.NoteDir(dirsRecord, jdir)
	}
	if err == nil {
		err = journal.DeadElsewhere(dirsRecord, jdir)
	}
	if err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// proveRun is what advise --prove claims this machine as, once for all
// its A/B runs (beginRun): their engine and, for kube, their cluster,
// from which runner.LockMachine tells whether its nodes run on this
// kernel (given none, it took no lock, and the A/B runs of nodes on this
// kernel kept no local run away), and the cleanup --kube a refusal
// names.
func proveRun(opt prove.Options, fs *pflag.FlagSet) runner.Options {
	r := runner.Options{Engine: opt.Engine, Kube: opt.Kube}
	if opt.Engine == "kube" {
		r.Cleanup = cmdline.Quote(kubeCleanupWords(fs))
	}
	return r
}

// refuseLocalJournalDir refuses dir, a kube run's --journal-dir, when
// local runs journal there: the default directory or one the machine's
// record names. `cnibench cleanup` replays those against this machine,
// while a kube run's controller journals name the cluster nodes' values
// (kubeJournalDirFor). "" is the kube runs' own directory: fine.
func refuseLocalJournalDir(dir string) error {
	if dir == "" {
		return nil
	}
	local, err := journal.LocalRunsDir(dirsRecord, dir)
	if err != nil || !local {
		return err
	}
	return fmt.Errorf("--journal-dir %s: local runs journal there, and `cnibench cleanup` would replay this kube run's journals "+
		"against this machine; give a directory of the kube runs' own, or leave --journal-dir out", dir)
}

// checkJournalDir refuses a cleanup --journal-dir that does not exist,
// but for the default one (gone at reboot with what it journaled): no
// run journaled there, so it is mistyped. cleanup made it (for its
// lock), found nothing, said "nothing to clean up" and exited 0, the
// journals of the directory meant not replayed. A dry run is refused
// too: its "nothing" would be as wrong. The refusal names the
// directories runs journaled in (the record's that exist).
func checkJournalDir(dir string) error {
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil // any other trouble is the lock's to say
	}
	if abs, err := filepath.Abs(dir); err == nil && abs == journal.DefaultDir {
		return nil
	}
	known := []string{journal.DefaultDir}
	if dirs, err := journal.Dirs(dirsRecord, journal.DefaultDir); err == nil {
		known = append(known, dirs...)
	}
	return fmt.Errorf("--journal-dir %s does not exist: no run journaled there (runs journaled in %s; cnibench cleanup without --journal-dir replays them all)",
		dir, strings.Join(known, ", "))
}
