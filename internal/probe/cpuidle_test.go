package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// The cpuidle probe finds states and the CPU's latency limit and
// describes the states; without a driver, or without the limit's file, it
// says why not.
func TestCPUIdleOn(t *testing.T) {
	root := t.TempDir()
	put := func(p, v string) {
		t.Helper()
		f := filepath.Join(root, cpuidle.Dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := sysfs.Dir(root)
	if ok, d := cpuIdleOn(r); ok || !strings.Contains(d, "no cpuidle driver") {
		t.Errorf("no cpuidle: %v %q", ok, d)
	}
	put("cpuidle/current_driver", "haltpoll")
	put("cpuidle/current_governor", "haltpoll")
	put("cpu0/cpuidle/state0/name", "POLL")
	put("cpu0/cpuidle/state0/latency", "0")
	put("cpu0/cpuidle/state1/name", "haltpoll idle")
	put("cpu0/cpuidle/state1/latency", "1")
	if ok, d := cpuIdleOn(r); ok || !strings.Contains(d, "kernels before 4.11") {
		t.Errorf("no latency limit: %v %q", ok, d)
	}
	put("cpu0/power/pm_qos_resume_latency_us", "0")
	if ok, d := cpuIdleOn(r); !ok || d != "driver haltpoll, governor haltpoll; states (exit latency): POLL (0 µs), haltpoll idle (1 µs)" {
		t.Errorf("haltpoll: %v %q", ok, d)
	}
}
