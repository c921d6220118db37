package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/journal"
)

// livePIDs returns the owners of journals in dir that are alive; with
// run set, only those of that run's sessions (journals are named
// RUN_PID).
func livePIDs(dir, run string) []int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), journal.Ext) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		r, err := journal.ReadReplay(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if of, ok := sessionRun(r.Header); run != "" && (!ok || of != run) {
			r.Release()
			continue
		}
		if r.Header.PID != os.Getpid() && journal.ProcessAlive(r.Header.PID, r.Header.PIDStart) {
			out = append(out, r.Header.PID)
		}
	}
	return out
}

// sessionRun is the run of a session's journal, whose ID is RUN_PID with
// its header's pid: exactly, so that run "r" is not taken for "r_x"
// (run IDs may hold '_'); ok is false for any other journal.
func sessionRun(h journal.Header) (string, bool) {
	suffix := "_" + strconv.Itoa(h.PID)
	run, ok := strings.CutSuffix(h.RunID, suffix)
	return run, ok && run != ""
}
