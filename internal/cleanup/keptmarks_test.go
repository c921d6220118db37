package cleanup

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// unreadableFS is a mapFS whose path bad cannot be read.
type unreadableFS struct {
	*mapFS
	bad string
}

func (f unreadableFS) Read(ns, kind, p string) (string, error) {
	if p == f.bad {
		return "", errors.New("EIO")
	}
	return f.mapFS.Read(ns, kind, p)
}

// TestKeptJournalMarksRestored: a journal kept because one value could
// not be read records which values were put back, so the next cleanup
// does not judge them again: one someone has since set to what the run
// once wrote is theirs now, not the run's to overwrite. Before, every
// entry of a kept journal was judged again.
func TestKeptJournalMarksRestored(t *testing.T) {
	const flows = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	run := tunetest.NewID()
	node := "cnb-" + run + "-node"
	h := startHelper(t, "journal", dir, run)
	h.crash(t)
	fs := &mapFS{vals: map[string]string{
		"|" + flows: "32768",
		node + "|class/net/eth1/queues/rx-0/rps_cpus":     "1",
		node + "|class/net/eth1/queues/rx-0/rps_flow_cnt": "32768",
	}}
	opts := Options{JournalDir: dir, Run: run, FS: unreadableFS{fs, "class/net/eth1/queues/rx-0/rps_flow_cnt"}}
	rep, err := Run(context.Background(), opts)
	if err == nil || count(rep, ActKeep) != 1 || fs.vals["|"+flows] != "0" {
		t.Fatalf("first cleanup = %v, actions %v, %s = %q; want it kept with %s put back", err, rep.Actions, flows, fs.vals["|"+flows], flows)
	}

	fs.vals["|"+flows] = "32768" // an operator's, after the cleanup
	fs.writes = nil
	opts.FS = fs
	if rep, err := Run(context.Background(), opts); err != nil {
		t.Fatalf("second cleanup = %v, actions %v", err, rep.Actions)
	}
	for _, w := range fs.writes {
		if strings.Contains(w, flows) {
			t.Errorf("second cleanup wrote %s over the operator's value: it was restored already", w)
		}
	}
	if got := fs.vals[node+"|class/net/eth1/queues/rx-0/rps_flow_cnt"]; got != "0" {
		t.Errorf("rps_flow_cnt = %q after the second cleanup, want 0", got)
	}
}
