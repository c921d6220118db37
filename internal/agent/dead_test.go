package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// writeDeadJournal writes a journal whose owner pid does not exist.
func writeDeadJournal(t *testing.T, dir string, sets ...journal.Set) {
	t.Helper()
	hdr := map[string]any{"header": journal.Header{Version: 1, RunID: "dead_1", PID: 1 << 30, PIDStart: 1, Started: time.Now(), Prefix: "cnb-"}}
	recs := []any{hdr}
	for i, s := range sets {
		recs = append(recs, map[string]any{"seq": i + 1, "set": s})
	}
	var b []byte
	for _, r := range recs {
		l, _ := json.Marshal(r)
		b = append(append(b, l...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "dead_1"+journal.Ext), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A dead session's journal with an unreadable line in the middle: what
// can be read is undone and the file set aside, with an error naming the
// line; the next replay finds nothing (before, every replay failed on it).
func TestReplaySetsDamagedJournalAside(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	fs.vals[key("", "sysfs", p)] = "3"
	writeDeadJournal(t, dir, journal.Set{Netns: "", FS: "sysfs", Path: p, Old: "0", New: "3"})
	path := filepath.Join(dir, "dead_1"+journal.Ext)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"seq\":2,\"set\":{\"fs\":\"sy\x00\x00\n")
	f.WriteString(`{"seq":3,"set":{"netns":"","fs":"sysfs","path":"class/net/eth1/mtu","old":"1500","new":"1450"}}` + "\n")
	f.Close()
	fs.vals[key("", "sysfs", "class/net/eth1/mtu")] = "1450"
	node := &nodeFS{base: fs, pods: fakePods{}}
	sum, err := Replay(dir, node)
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), journal.CorruptExt) {
		t.Fatalf("replay = %+v, %v; want the damaged line named and the journal set aside", sum, err)
	}
	if sum.Restored != 2 || fs.vals[key("", "sysfs", p)] != "0" || fs.vals[key("", "sysfs", "class/net/eth1/mtu")] != "1500" {
		t.Errorf("readable entries not undone: %+v", sum)
	}
	if _, err := os.Stat(path + journal.CorruptExt); err != nil {
		t.Errorf("not set aside: %v", err)
	}
	if sum, err := Replay(dir, node); err != nil || !sum.Empty() {
		t.Errorf("second replay = %+v, %v; want nothing to do", sum, err)
	}
}
