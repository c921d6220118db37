package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/journal"
)

// sessions lists the live sessions whose journals are in dir and whose
// run of is true for (nil: every run): journals named RUN_PID whose
// owner, checked by its start time against pid reuse, is alive and is
// not this process. A journal it cannot read is left to the replay,
// which reports it. A stopping daemon (stopSessions) and cleanup's
// ending of dead runs (EndRuns) find the sessions they signal here.
func sessions(dir string, of func(run string) bool) []*liveSession {
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext))
	var out []*liveSession
	for _, p := range paths {
		r, err := journal.ReadReplay(p)
		if err != nil {
			continue
		}
		r.Release()
		h := r.Header
		run, ok := sessionRun(h)
		if !ok || of != nil && !of(run) || h.PID == os.Getpid() || !journal.ProcessAlive(h.PID, h.PIDStart) {
			continue
		}
		out = append(out, &liveSession{run: run, pid: h.PID, start: h.PIDStart, journal: p})
	}
	return out
}

// livePIDs returns the owners of live session journals in dir; with run
// set, only those of that run's sessions.
func livePIDs(dir, run string) []int {
	var of func(string) bool
	if run != "" {
		of = func(r string) bool { return r == run }
	}
	var out []int
	for _, s := range sessions(dir, of) {
		out = append(out, s.pid)
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
