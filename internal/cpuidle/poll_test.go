package cpuidle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/sysfs"
)

// PollTimes reads state0's time where state0 is POLL; a CPU whose state0
// is something else (a driver without a polling state), an offline CPU
// without cpuidle, and entries that are not CPUs are left out.
func TestPollTimes(t *testing.T) {
	root := fixture(t) // cpu0: POLL as state0
	put := func(p, v string) { putFile(t, root, p, v) }
	put("cpu0/cpuidle/state0/time", "123456789012")
	put("cpu1/cpuidle/state0/name", "C1") // no polling state
	put("cpu1/cpuidle/state0/time", "5")
	put("cpu2/online", "0") // offline: no cpuidle directory
	put("cpu3/cpuidle/state0/name", "POLL")
	put("cpu3/cpuidle/state0/time", "0")
	put("cpufreq/policy0", "")
	got, err := PollTimes(sysfs.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 123456789012 || got[3] != 0 {
		t.Errorf("PollTimes = %v, want CPU 0: 123456789012, CPU 3: 0", got)
	}

	put("cpu3/cpuidle/state0/time", "soon")
	if _, err := PollTimes(sysfs.Dir(root)); err == nil || !strings.Contains(err.Error(), "CPU 3") {
		t.Errorf("a bad time: err = %v", err)
	}
	if _, err := PollTimes(sysfs.Dir(t.TempDir())); err == nil {
		t.Error("no CPU directory: no error")
	}
	// No cpuidle driver: no CPU has states, so nothing is measured.
	bare := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bare, Dir, "cpu0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := PollTimes(sysfs.Dir(bare)); err != nil || len(got) != 0 {
		t.Errorf("no driver: %v, %v", got, err)
	}
}
