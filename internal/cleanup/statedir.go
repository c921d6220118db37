package cleanup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnibench/cnibench/internal/journal"
)

// stateDir is a run's state directory found in a journal directory.
type stateDir struct{ run, path string }

// stateDirs lists the state directories (journal.StateDir) in each of
// the journal directories: a run keeps its own below the directory it
// journals in, so a --journal-dir run's is not below JournalDir (own).
// Entries whose name is not a run ID are not cnibench's and are ignored;
// in a directory other than own, which a user chose and may keep other
// things in (--journal-dir ~/proj with a state/ of its own), only names
// the runner makes (journal.GeneratedRunID): `cleanup --orphans` removes
// what it lists.
func stateDirs(journalDirs []string, own string) ([]stateDir, error) {
	var found []stateDir
	var errs []error
	for _, dir := range journalDirs {
		ents, err := os.ReadDir(filepath.Join(dir, journal.StateSubdir))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("list run state directories of %s: %w", dir, err))
			continue
		}
		for _, e := range ents {
			if journal.CheckRunID(e.Name()) == nil && (dir == own || journal.GeneratedRunID(e.Name())) {
				found = append(found, stateDir{e.Name(), journal.StateDir(dir, e.Name())})
			}
		}
	}
	return found, errors.Join(errs...)
}

// staleDirs removes a dead run's state directory (the one its journal
// recorded and the one named after it: a run may have died between
// journaling and creating it, or have been started by an engine whose
// recorder does not journal directories) and its journaled temporary
// directory. The run's state directory is below jdir, the directory its
// journal is in, where the runner made it; not below JournalDir, which
// for a recorded directory's journal is another. A journaled path
// elsewhere is never touched: a journal must not widen what cleanup
// removes.
func (c *cleaner) staleDirs(run, jdir string, journaled []journal.Object) {
	own := journal.StateDir(jdir, run)
	for _, o := range journaled {
		p := filepath.Clean(o.Name)
		if journal.IsTempDir(o.Name, run) {
			c.removeDir(run, p, "the run's temporary directory")
			continue
		}
		if p != own && !strings.HasPrefix(p, own+string(filepath.Separator)) {
			c.rep.add(run, ActSkip, "dir "+o.Name, "not inside the run's state directory "+own+" nor its temporary directory; not touched")
			continue
		}
		c.removeDir(run, p, "journaled")
	}
	c.removeDir(run, own, "the run's state directory")
}

// removeDir deletes a run's state directory and everything in it. A
// symlink or file in its place is left alone: cleanup removes only what a
// run creates, and runs create directories.
// Equivalent to: rm -r DIR
func (c *cleaner) removeDir(run, path, why string) {
	if c.handled[path] {
		return
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		c.fail(fmt.Errorf("directory %s: %w", path, err))
		return
	}
	c.handled[path] = true
	if !fi.IsDir() {
		c.rep.add(run, ActSkip, "dir "+path, "not a directory; not touched")
		return
	}
	if !c.opts.DryRun {
		if err := os.RemoveAll(path); err != nil {
			c.fail(fmt.Errorf("remove directory %s: %w", path, err))
			return
		}
	}
	c.rep.add(run, ActDir, path, why)
}
