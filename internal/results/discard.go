package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DiscardUnrecorded removes, after Close, what a new run made in its
// directory when it ended before recording anything: no env.json (a run
// writes it once its first cluster is up, and --resume cannot continue a
// run without it) and not a line in samples.jsonl or cpu.jsonl. Such a
// run, a study of one datapath whose set-up failed (a kube agent not
// ready yet, an image not pulled yet), left study.yaml and two empty
// files, so the same command, which its error tells the user to run
// again, was refused ("directory already holds a run"), and --resume
// refused it too ("start it again in a new directory"). The directory
// itself goes only when Create made it (a directory the user made empty
// for --out stays). It reports whether it discarded the run; a directory
// with anything recorded is left as it is.
func (w *Writer) DiscardUnrecorded() (bool, error) {
	if !w.closed {
		return false, errors.New("discard an unrecorded run: its files are still open")
	}
	if !Unrecorded(w.dir) {
		return false, nil
	}
	if err := removeTempLeftovers(w.dir); err != nil {
		return false, err
	}
	for _, name := range []string{StudyFile, SamplesFile, CPUFile} {
		if err := os.Remove(filepath.Join(w.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("remove the files of a run that recorded nothing: %w", err)
		}
	}
	if w.made {
		// Not empty: something else was put there meanwhile, which stays.
		_ = os.Remove(w.dir)
	}
	return true, nil
}

// HasEnv says whether dir holds env.json, which a run writes once its
// first cluster is built and --resume checks against.
func HasEnv(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, EnvFile))
	return !errors.Is(err, os.ErrNotExist)
}

// Unrecorded says whether dir holds a run that recorded nothing: no
// env.json, and samples.jsonl and cpu.jsonl there but empty. A run ends
// so when it is killed (or stopped by a third signal) before its first
// cluster is up, and its files then stay (DiscardUnrecorded did not run).
func Unrecorded(dir string) bool {
	if HasEnv(dir) {
		return false
	}
	for _, name := range []string{SamplesFile, CPUFile} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() > 0 {
			return false
		}
	}
	return true
}
