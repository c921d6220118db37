package cleanup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// TestEarlierBootNothingToRevert: a dead run's journal whose header
// names another boot (one kept in a --journal-dir that survived a
// reboot) is not replayed against this boot's values, which the reboot
// reset and this boot may have set since: nothing is written, its state
// directory is removed, and so is the journal, saying why. Before, the
// old values were written over this boot's.
func TestEarlierBootNothingToRevert(t *testing.T) {
	dir := t.TempDir()
	run := tunetest.NewID()
	node := "cnb-" + run + "-node"
	h := startHelper(t, "journal", dir, run)
	h.crash(t)
	path := filepath.Join(dir, run+journal.Ext)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	now, err := journal.BootID()
	if err != nil || now == "" || !strings.Contains(string(b), `"bootId":"`+now+`"`) {
		t.Skipf("this machine's boot ID (%q, %v) is not in the journal's header", now, err)
	}
	b = []byte(strings.Replace(string(b), `"bootId":"`+now+`"`, `"bootId":"00000000-0000-0000-0000-000000000000"`, 1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	state := journal.StateDir(dir, run)
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	fs := &mapFS{vals: map[string]string{ // this boot's values
		"|/proc/sys/net/core/rps_sock_flow_entries":       "32768",
		node + "|class/net/eth1/queues/rx-0/rps_cpus":     "1",
		node + "|class/net/eth1/queues/rx-0/rps_flow_cnt": "32768",
	}}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.writes) != 0 || count(rep, ActRevert) != 0 {
		t.Errorf("wrote %v, reverts %d: an earlier boot's values are not this boot's", fs.writes, count(rep, ActRevert))
	}
	said := false
	for _, a := range rep.Actions {
		said = said || strings.Contains(a.Detail, "from an earlier boot: nothing to revert")
	}
	if !said {
		t.Errorf("actions %v do not say the journal is of an earlier boot", rep.Actions)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state directory %s: %v, want removed", state, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("journal %s: %v, want removed", path, err)
	}
}
