package app

import (
	"github.com/cnibench/cnibench/internal/journal"
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
func beginRun(opt *runner.Options, jdir string) (*journal.Lock, error) {
	lock, err := journal.BeginRun(jdir)
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
