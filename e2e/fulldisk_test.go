package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFullDiskStopsCleanly runs a study whose run directory sits on a
// file system too small for its samples: the first failed write must end
// the run with the error, revert everything and leave no process.
func TestFullDiskStopsCleanly(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=24k"); err != nil {
		t.Skipf("skipped: cannot mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	before, iperfBefore := snapshot(t), allIperf()
	jdir := t.TempDir()
	study := writeStudy(t, strings.Replace(resumeStudy, "trials: 4", "trials: 3", 1))
	r := cnibench(t, nil, "run", study, "--out", filepath.Join(mnt, "run"), "--journal-dir", jdir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a failed run):\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("the error does not say the disk is full:\n%s", r.stderr)
	}
	assertUntouched(t, before, "")
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left after the failed run: %v", ents)
	}
	if left := newIperf(iperfBefore); len(left) > 0 {
		t.Errorf("iperf3 left running: %v", left)
	}
	// The directory holds what was written before the disk filled; its
	// samples, if any, are whole lines.
	if b, err := os.ReadFile(filepath.Join(mnt, "run", "samples.jsonl")); err == nil && len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("samples.jsonl ends with a partial line")
	}
	_ = exec.Command("sync").Run()
}
