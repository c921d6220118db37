package cpuidle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// fixture writes a sysfs tree: CPU 0 with POLL, C1 and (as state10, to
// check numeric order) a disabled C6, and state9 without a latency file.
func fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := func(p, v string) { putFile(t, root, p, v) }
	put("cpuidle/current_driver", "intel_idle")
	put("cpuidle/current_governor_ro", "menu")
	for _, s := range []struct {
		n                  int
		name, lat, disable string
	}{{0, "POLL", "0", "0"}, {1, "C1", "2", "0"}, {10, "C6", "170", "1"}} {
		dir := fmt.Sprintf("cpu0/cpuidle/state%d/", s.n)
		put(dir+"name", s.name)
		put(dir+"latency", s.lat)
		put(dir+"disable", s.disable)
	}
	put("cpu0/cpuidle/state9/name", "C3")
	put("cpu0/cpuidle/driver/name", "intel_idle") // not a state
	return root
}

// Machine records the driver, the governor (current_governor_ro when the
// governor cannot be switched) and CPU 0's states in index order; a
// machine without cpuidle, or with the "none" driver, has none.
func TestMachine(t *testing.T) {
	if c := Machine(sysfs.Dir(t.TempDir())); c != nil {
		t.Errorf("no cpuidle: %+v", c)
	}
	root := fixture(t)
	c := Machine(sysfs.Dir(root))
	if c == nil || c.Driver != "intel_idle" || c.Governor != "menu" || len(c.States) != 3 ||
		c.States[0].Name != "POLL" || c.States[1].LatencyUS != 2 || c.States[2].Name != "C6" || !c.States[2].Disabled || c.States[1].Disabled {
		t.Errorf("Machine = %+v", c)
	}
	if err := os.WriteFile(filepath.Join(root, Dir, "cpuidle/current_driver"), []byte("none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := Machine(sysfs.Dir(root)); c != nil {
		t.Errorf("driver none: %+v", c)
	}
}

// States are in index order with their indexes; a CPU without a cpuidle
// directory is ErrNone; Slower picks the enabled states a bound keeps
// the CPU out of (C6 is disabled already).
func TestStatesAndSlower(t *testing.T) {
	r := sysfs.Dir(fixture(t))
	st, err := States(r, 0)
	if err != nil || len(st) != 3 || st[2].Index != 10 || st[1].Index != 1 {
		t.Fatalf("States = %+v, %v", st, err)
	}
	if _, err := States(r, 1); !errors.Is(err, ErrNone) {
		t.Errorf("CPU 1: err = %v, want ErrNone", err)
	}
	for _, c := range []struct {
		max  int
		want []int
	}{{0, []int{1}}, {2, nil}, {169, nil}} {
		var got []int
		for _, s := range Slower(st, c.max) {
			got = append(got, s.Index)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Slower(%d) = %v, want %v", c.max, got, c.want)
		}
	}
}

// LimitPath and ParseLimitPath are each other's inverse, any other path
// is refused, and a bound of 0 is written as the kernel's "n/a".
func TestLimitPath(t *testing.T) {
	p := LimitPath(12)
	if p != "devices/system/cpu/cpu12/power/pm_qos_resume_latency_us" {
		t.Errorf("LimitPath = %q", p)
	}
	if c, ok := ParseLimitPath(p); !ok || c != 12 {
		t.Errorf("ParseLimitPath(%q) = %d, %v", p, c, ok)
	}
	for _, bad := range []string{
		"class/net/eth0/queues/rx-0/rps_cpus",
		"devices/system/cpu/cpu1/power/control",
		"devices/system/cpu/cpuX/power/pm_qos_resume_latency_us",
		"devices/system/cpu/cpu01/power/pm_qos_resume_latency_us",
		"devices/system/cpu/cpu-1/power/pm_qos_resume_latency_us",
		"devices/system/cpu/cpu1/power/pm_qos_resume_latency_us/x",
		"devices/system/cpu/cpu1/cpuidle/state1/disable",
	} {
		if _, ok := ParseLimitPath(bad); ok {
			t.Errorf("ParseLimitPath(%q) accepted", bad)
		}
	}
	if LimitValue(0) != "n/a" || LimitValue(10) != "10" {
		t.Errorf("LimitValue(0) = %q, LimitValue(10) = %q", LimitValue(0), LimitValue(10))
	}
}

// The limit's values in words: the kernel prints "0" for no limit and
// "n/a" for a limit of 0.
func TestLimitText(t *testing.T) {
	for v, want := range map[string]string{"0": "no limit", "n/a\n": "0 µs: polling only", "20": "20 µs at most"} {
		if got := LimitText(v); got != want {
			t.Errorf("LimitText(%q) = %q, want %q", v, got, want)
		}
	}
}

// A wake-up is slow from a state that exits in 10 µs or more, or from
// haltpoll's halt whatever it states; disabled states do not count.
func TestSlowWake(t *testing.T) {
	for _, c := range []struct {
		idle *results.CPUIdle
		want string
	}{
		{nil, "[]"},
		{&results.CPUIdle{Driver: "intel_idle", States: []results.IdleState{{Name: "POLL"}, {Name: "C1", LatencyUS: 2}, {Name: "C1E", LatencyUS: 10}}}, "[C1E]"},
		{&results.CPUIdle{Driver: "intel_idle", States: []results.IdleState{{Name: "C1", LatencyUS: 2}, {Name: "C6", LatencyUS: 133, Disabled: true}}}, "[]"},
		{&results.CPUIdle{Driver: "haltpoll", States: []results.IdleState{{Name: "POLL"}, {Name: "haltpoll idle", LatencyUS: 1}}}, "[haltpoll idle]"},
	} {
		var names []string
		for _, s := range SlowWake(c.idle) {
			names = append(names, s.Name)
		}
		if got := fmt.Sprint(names); got != c.want {
			t.Errorf("SlowWake(%v) = %s, want %s", c.idle, got, c.want)
		}
	}
}

// putFile writes v to p under root's CPU directory (Dir).
func putFile(t *testing.T, root, p, v string) {
	t.Helper()
	f := filepath.Join(root, Dir, p)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
