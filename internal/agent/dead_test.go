package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
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
