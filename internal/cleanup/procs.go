package cleanup

import (
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/nsprocs"
)

// processAlive is journal.ProcessAlive (tests play a process slow to
// exit after SIGKILL).
var processAlive = journal.ProcessAlive

// killer kills a run's processes and waits for them (nsprocs): no
// signal to cleanup ends the wait, which Options.KillTimeout bounds.
func killer() nsprocs.Killer { return nsprocs.Killer{Alive: processAlive} }

// KillInNetns kills every process inside the named namespace (any thread
// in it counts) with SIGKILL and waits until they are gone, so a deleted
// namespace is not kept alive by a straggler. A missing namespace has no
// processes.
func KillInNetns(name string) error {
	_, err := nsprocs.KillAllIn(name, nsprocs.DefaultTimeout)
	return err
}
