package cleanup

import "github.com/cnibench/cnibench/internal/journal"

// journalDirs are the directories whose dead runs' journals are
// replayed: JournalDir, and with DirsRecord every other directory local
// runs have journaled in (journal.NoteDir). A run of one directory may
// have started on the values a dead run of another left (before the
// runs refused that, or by a record lost meanwhile): replaying each
// directory apart, oldest run first, would find the newer run's value,
// call it changed since, and drop the older's journal.
func (c *cleaner) journalDirs() []string {
	dirs := []string{c.opts.JournalDir}
	if c.opts.DirsRecord == "" {
		return dirs
	}
	more, err := journal.Dirs(c.opts.DirsRecord, c.opts.JournalDir)
	c.fail(err)
	return append(dirs, more...)
}

// live is journal.Live over every replayed directory.
func (c *cleaner) live() (map[string]bool, error) {
	all := map[string]bool{}
	for _, d := range c.dirs {
		live, err := journal.Live(d)
		if err != nil {
			return nil, err
		}
		for id := range live {
			all[id] = true
		}
	}
	return all, nil
}
