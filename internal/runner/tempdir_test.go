package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/journal"
)

// TestRunTempDir: during a run, temporary files go to the run's own
// journaled temporary directory; a clean end removes it and restores TMPDIR;
// after a crash (the journal left with the directory pending), cleanup
// removes it with whatever the helpers left there.
func TestRunTempDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv("TMPDIR", base)
	for _, crash := range []bool{false, true} {
		jdir := t.TempDir()
		j, err := journal.Open(jdir, "tmpdirtest", "cnb-")
		if err != nil {
			t.Fatal(err)
		}
		r := &run{id: "tmpdirtest", jdir: jdir, journal: j}
		restore, err := r.useTempDir()
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(base, "cnibench-"+r.id)
		if got := os.TempDir(); got != tmp {
			t.Errorf("TMPDIR during the run = %s, want %s", got, tmp)
		}
		if fi, err := os.Stat(tmp); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("temporary directory: %v %v, want mode 0755 (nginx's workers reach their site)", fi, err)
		}
		helper, err := os.MkdirTemp("", "cnibench-bird-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(helper, "bird.conf"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !crash {
			if err := restore(); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Errorf("journal after a clean end: %v", err)
			}
		} else {
			// The process dies: TMPDIR dies with it, the journal stays.
			os.Setenv("TMPDIR", base)
			var pe *journal.PendingError
			if err := j.Close(); !errors.As(err, &pe) {
				t.Fatalf("journal after a crash: %v, want the state directory pending", err)
			}
			orphanJournal(t, j.Path())
			if _, err := cleanup.Run(context.Background(), cleanup.Options{JournalDir: jdir, Run: r.id}); err != nil {
				t.Fatal(err)
			}
		}
		if got := os.TempDir(); got != base {
			t.Errorf("crash %v: TMPDIR after the run = %s, want %s", crash, got, base)
		}
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("crash %v: temporary directory %s still there (%v)", crash, tmp, err)
		}
		if ents, _ := filepath.Glob(filepath.Join(jdir, "*"+journal.Ext)); len(ents) != 0 {
			t.Errorf("crash %v: journals left: %v", crash, ents)
		}
	}
}

// orphanJournal makes the journal at path look like a dead process's (an
// owner start time that no live process has), as after a SIGKILL.
func orphanJournal(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	var rec map[string]journal.Header
	if err := json.Unmarshal([]byte(head), &rec); err != nil {
		t.Fatal(err)
	}
	h := rec["header"]
	h.PIDStart = 1
	line, _ := json.Marshal(map[string]journal.Header{"header": h})
	if err := os.WriteFile(path, []byte(string(line)+"\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
}
