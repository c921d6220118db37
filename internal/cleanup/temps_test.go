package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDeadProcessesTempsRemoved: a journal's temporary file (its run
// killed between creating it and linking it into place) and a probe's
// temporary directory (perf's sampling probe, killed mid-probe) are
// removed once their process is gone, and only reported by a dry run.
// Nothing removed them before: .RUN-*.tmp stayed in /run/cnibench and
// cnibench-perf-probe-* in /tmp until reboot.
func TestDeadProcessesTempsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	pid := deadPID(t)
	file := filepath.Join(dir, fmt.Sprintf(".gone-%d-1-5.tmp", pid))
	if err := os.WriteFile(file, []byte(`{"header":{}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(tmp, fmt.Sprintf("cnibench-perf-probe-%d-1-7", pid))
	if err := os.MkdirAll(filepath.Join(probe, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		rep, err := Run(context.Background(), Options{JournalDir: dir, FS: &mapFS{vals: map[string]string{}}, DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		said := map[string]bool{}
		for _, a := range rep.Actions {
			if a.Kind == ActTemp {
				said[a.Object] = true
			}
		}
		if !said[file] || !said[probe] {
			t.Errorf("dry run %v: actions %v, want both removals", dry, rep.Actions)
		}
		for _, p := range []string{file, probe} {
			_, err := os.Lstat(p)
			if gone := errors.Is(err, os.ErrNotExist); gone == dry {
				t.Errorf("dry run %v: %s gone: %v", dry, p, gone)
			}
		}
	}
}
