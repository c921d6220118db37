package cleanup

import (
	"fmt"
	"os"

	"github.com/cnibench/cnibench/internal/journal"
)

// ActTemp removes a temporary file or directory of a process that died
// before it could: a journal's, killed between creating it and linking
// it into place (journal.DeadTemps), or a probe's own temporary
// directory, such as perf's sampling probe's (journal.DeadOwnTemps).
const ActTemp = "remove-temp"

// sweepTemps removes the temporary files whose names prove their owner
// gone, as sweepProbes does scratch namespaces: in every mode (they are
// no run's to choose), a dry run only saying so. The directories are
// looked for in this process's temporary directory ($TMPDIR or /tmp),
// where the prober made them if it had the same $TMPDIR.
func (c *cleaner) sweepTemps() {
	temps, err := journal.DeadTemps(c.opts.JournalDir)
	c.fail(err)
	for _, tmp := range temps {
		c.removeTemp(tmp.Run, tmp.Path, fmt.Sprintf("a journal's temporary file; its run, pid %d, is gone", tmp.PID), os.Remove)
	}
	dirs, err := journal.DeadOwnTemps(os.TempDir())
	c.fail(err)
	for _, d := range dirs {
		c.removeTemp(ProbeRun, d.Path, fmt.Sprintf("its prober, pid %d, is gone", d.PID), os.RemoveAll)
	}
}

func (c *cleaner) removeTemp(run, path, why string, remove func(string) error) {
	if !c.opts.DryRun {
		if err := remove(path); err != nil && !os.IsNotExist(err) {
			c.fail(fmt.Errorf("remove %s: %w", path, err))
			return
		}
	}
	c.rep.add(run, ActTemp, path, why)
}
