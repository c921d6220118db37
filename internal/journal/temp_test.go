package journal

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseTempNames(t *testing.T) {
	h := Header{RunID: "3f9a2c", PID: 4711, PIDStart: 99}
	name := tempPattern(h)
	if name != ".3f9a2c-4711-99-*.tmp" {
		t.Fatalf("tempPattern = %q", name)
	}
	if run, pid, start, ok := parseTemp(".3f9a2c-4711-99-123456.tmp"); !ok || run != "3f9a2c" || pid != 4711 || start != 99 {
		t.Errorf("parseTemp = %s %d %d %v", run, pid, start, ok)
	}
	for _, bad := range []string{".3f9a2c-123.tmp", "3f9a2c-4711-99-1.tmp", ".3f9a2c-4711-99-1", ".a-b-4711-99-1.tmp", ".x-0-99-1.tmp", ".x-4711-099-1.tmp", ".x-4711-99-.tmp"} {
		if _, _, _, ok := parseTemp(bad); ok {
			t.Errorf("parseTemp(%q) ok", bad)
		}
	}
	if pid, start, ok := parseOwnTemp("cnibench-perf-probe-4711-99-123"); !ok || pid != 4711 || start != 99 {
		t.Errorf("parseOwnTemp = %d %d %v", pid, start, ok)
	}
	for _, bad := range []string{"cnibench-3f9a2c", "cnibench-perf-probe-123", "cnibench-perf-probe-4711-99-x", "cnibench-Perf-4711-99-1",
		"cnibench--4711-99-1", "other-perf-4711-99-1", "cnibench-perf-probe-4711-99-"} {
		if _, _, ok := parseOwnTemp(bad); ok {
			t.Errorf("parseOwnTemp(%q) ok", bad)
		}
	}
}

// TestDeadTemps: a journal's temporary file, and a process's own
// temporary directory, are listed once their owner is gone (killed
// between creating and removing them), not while it lives; a link or a
// name without its owner is never listed.
func TestDeadTemps(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	me, err := ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	live := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(me, 10)
	for _, n := range []string{".gone-" + dead + "-1-11.tmp", ".here-" + live + "-12.tmp", ".old-13.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	temps, err := DeadTemps(dir)
	if err != nil || len(temps) != 1 || temps[0].Run != "gone" || filepath.Base(temps[0].Path) != ".gone-"+dead+"-1-11.tmp" {
		t.Fatalf("DeadTemps = %+v, %v; want the dead run's file only", temps, err)
	}

	base := t.TempDir()
	for _, n := range []string{"cnibench-perf-probe-" + dead + "-1-21", "cnibench-perf-probe-" + live + "-22", "cnibench-3f9a2c"} {
		if err := os.Mkdir(filepath.Join(base, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(dir, filepath.Join(base, "cnibench-perf-probe-"+dead+"-1-23")); err != nil {
		t.Fatal(err)
	}
	dirs, err := DeadOwnTemps(base)
	if err != nil || len(dirs) != 1 || filepath.Base(dirs[0].Path) != "cnibench-perf-probe-"+dead+"-1-21" {
		t.Fatalf("DeadOwnTemps = %+v, %v; want the dead prober's directory only", dirs, err)
	}
	if p := OwnTempPattern("perf-probe"); p != "cnibench-perf-probe-"+live+"-*" {
		t.Errorf("OwnTempPattern = %q", p)
	}
}
