package cpuidle

import (
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// memSysfs is a sysfs tree in memory: a fuzz iteration writes no files.
// Values are returned as a sysfs.Dir returns them, trimmed.
type memSysfs struct {
	files map[string]string
	dirs  map[string][]string
}

func (m memSysfs) Read(p string) (string, error) {
	v, ok := m.files[p]
	if !ok {
		return "", fmt.Errorf("read %s: %w", p, os.ErrNotExist)
	}
	return strings.TrimSpace(v), nil
}

func (m memSysfs) List(dir string) ([]string, error) {
	names, ok := m.dirs[dir]
	if !ok {
		return nil, fmt.Errorf("list %s: %w", dir, os.ErrNotExist)
	}
	return names, nil
}

const haltPollParam = "module/haltpoll/parameters/guest_halt_poll_ns"

// kernelLimit reports whether v is a pm_qos_resume_latency_us the kernel
// can print, and what ReadLimits records for it: "n/a" (a limit of 0),
// "0" (no limit: -1), or a positive s32 below S32_MAX ("%d";
// drivers/base/power/sysfs.c, pm_qos_resume_latency_us_show, whose store
// refuses negatives and S32_MAX, the "no constraint" value).
func kernelLimit(v string) (int64, bool) {
	switch v {
	case "n/a":
		return 0, true
	case "0":
		return -1, true
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n <= 0 || n == math.MaxInt32 || strconv.FormatInt(n, 10) != v {
		return 0, false
	}
	return n, true
}

// FuzzReadLimits: the limit files come from this machine's sysfs or a
// cluster node's (through its agent). Whatever ReadLimits records is a
// value the file can mean: -1 ("0", no limit), 0 ("n/a") or a positive
// number of µs the text says, for an online CPU; haltpoll's window is
// an unsigned int (module_param uint) the text says. Every value in the
// kernel's own format is recorded.
func FuzzReadLimits(f *testing.F) {
	f.Add("0-1", "0", "n/a", "200000\n")
	f.Add("0-1", "20\n", "0", "0")
	f.Add("0", "2000000000", "5", "")
	f.Add("0-1", "-1", "-20", "-5")
	f.Add("1", "no constraint", "+7", "4294967296")
	f.Add("", "1", "1", " 18446744073709551616 ")
	f.Fuzz(func(t *testing.T, online, lim0, lim1, haltpoll string) {
		m := memSysfs{files: map[string]string{
			path.Join(Dir, "online"): online,
			LimitPath(0):             lim0,
			LimitPath(1):             lim1,
		}}
		if haltpoll != "" {
			m.files[haltPollParam] = haltpoll
		}
		l := ReadLimits(m, "")
		cpus, _ := cpuset.Parse(online)
		texts := map[int]string{0: strings.TrimSpace(lim0), 1: strings.TrimSpace(lim1)}
		for c, v := range l.ResumeUS {
			text, ok := texts[c]
			if !ok || !cpus.Contains(c) {
				t.Fatalf("online %q: a limit for CPU %d, which is not an online CPU with a limit file", online, c)
			}
			if v < -1 || v > math.MaxInt32 {
				t.Errorf("CPU %d: %q recorded as %d, out of range (-1 none, 0 n/a, else µs)", c, text, v)
			}
			if want, ok := kernelLimit(text); ok && v != want {
				t.Errorf("CPU %d: %q recorded as %d, want %d", c, text, v, want)
			}
			if n, err := strconv.ParseInt(text, 10, 64); v > 0 && (err != nil || n != v) {
				t.Errorf("CPU %d: %q recorded as %d", c, text, v)
			}
		}
		for c, text := range texts {
			if _, ok := kernelLimit(text); ok && cpus.Contains(c) {
				if _, got := l.ResumeUS[c]; !got {
					t.Errorf("CPU %d: the kernel's %q was not recorded", c, text)
				}
			}
		}
		if l.HaltPollNS != nil {
			v, text := *l.HaltPollNS, strings.TrimSpace(haltpoll)
			if v < 0 || v > math.MaxUint32 {
				t.Errorf("guest_halt_poll_ns %q recorded as %d, out of an unsigned int's range", text, v)
			}
			if n, err := strconv.ParseInt(text, 10, 64); err != nil || n != v {
				t.Errorf("guest_halt_poll_ns %q recorded as %d", text, v)
			}
		}
	})
}

// FuzzLimitRoundTrip: what a tuning writes reads back as what it meant.
// LimitPath and ParseLimitPath are inverses, and a bound written as
// LimitValue is the bound ReadLimits records (0 through "n/a").
func FuzzLimitRoundTrip(f *testing.F) {
	f.Add(0, 0)
	f.Add(3, 1)
	f.Add(4095, 133)
	f.Add(-1, -5)
	f.Add(math.MaxInt, math.MaxInt32-1)
	f.Fuzz(func(t *testing.T, cpu, us int) {
		if cpu >= 0 {
			if got, ok := ParseLimitPath(LimitPath(cpu)); !ok || got != cpu {
				t.Errorf("ParseLimitPath(LimitPath(%d)) = %d, %v", cpu, got, ok)
			}
		} else if _, ok := ParseLimitPath(LimitPath(cpu)); ok {
			t.Errorf("ParseLimitPath accepted CPU %d", cpu)
		}
		if us < 0 || us >= math.MaxInt32 {
			return // the study refuses such a bound; the kernel too
		}
		m := memSysfs{files: map[string]string{path.Join(Dir, "online"): "0", LimitPath(0): LimitValue(us) + "\n"}}
		if got := ReadLimits(m, "").ResumeUS[0]; got != int64(us) {
			t.Errorf("a bound of %d µs written as %q reads back as %d", us, LimitValue(us), got)
		}
		if text := LimitText(LimitValue(us)); us > 0 && text != strconv.Itoa(us)+" µs at most" {
			t.Errorf("LimitText(%q) = %q", LimitValue(us), text)
		}
	})
}

// FuzzParseLimitPath: a path the journal or a node's agent hands back is
// a CPU's limit file only in LimitPath's exact form.
func FuzzParseLimitPath(f *testing.F) {
	for _, s := range []string{LimitPath(0), LimitPath(17), Dir + "/cpu01/power/" + LimitKnob, Dir + "/cpu-1/power/" + LimitKnob,
		Dir + "/cpu+1/power/" + LimitKnob, Dir + "/cpu1/power/" + LimitKnob + "/x", "class/net/eth0/queues/rx-0/rps_cpus", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		cpu, ok := ParseLimitPath(p)
		if ok && (cpu < 0 || LimitPath(cpu) != p) {
			t.Errorf("ParseLimitPath(%q) = %d: not LimitPath(%d) = %q", p, cpu, cpu, LimitPath(cpu))
		}
	})
}

// FuzzStates: the states of a CPU as sysfs lists them. Each recorded
// state is a stateN directory with the exit latency its file says, an
// unsigned number ("%llu", drivers/cpuidle/sysfs.c); they are in index
// order; a state in the kernel's format is never left out.
func FuzzStates(f *testing.F) {
	f.Add("state0,state1,state10,state9,driver", "0,2,170", "POLL", "0")
	f.Add("state0,state1", "1,-5", "haltpoll idle", "1")
	f.Add("state01,state1,state-1,state+2", "3", "C1E", "1\n")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, entries, lats, name, disable string) {
		dir := path.Join(Dir, "cpu0", "cpuidle")
		m := memSysfs{files: map[string]string{}, dirs: map[string][]string{dir: strings.Split(entries, ",")}}
		latOf := map[string]string{}
		for i, e := range m.dirs[dir] {
			l := strings.Split(lats, ",")
			latOf[e] = strings.TrimSpace(l[i%len(l)])
			m.files[path.Join(dir, e, "latency")] = l[i%len(l)]
			m.files[path.Join(dir, e, "name")] = name
			m.files[path.Join(dir, e, "disable")] = disable
		}
		states, err := States(m, 0)
		if err != nil {
			return
		}
		if !slices.IsSortedFunc(states, func(a, b State) int { return a.Index - b.Index }) {
			t.Errorf("states not in index order: %+v", states)
		}
		for _, s := range states {
			if s.LatencyUS < 0 {
				t.Errorf("state %d: exit latency %d µs recorded from %q", s.Index, s.LatencyUS, lats)
			}
			if s.Name != strings.TrimSpace(name) || s.Disabled != (strings.TrimSpace(disable) == "1") {
				t.Errorf("state %d = %+v from name %q, disable %q", s.Index, s, name, disable)
			}
		}
		kernel := 0
		for e, l := range latOf {
			i, err := strconv.Atoi(strings.TrimPrefix(e, "state"))
			n, lerr := strconv.ParseUint(l, 10, 31)
			if err == nil && lerr == nil && e == "state"+strconv.Itoa(i) && l == strconv.FormatUint(n, 10) {
				kernel++
			}
		}
		if len(states) < kernel {
			t.Errorf("%d states in the kernel's format, %d recorded: %+v", kernel, len(states), states)
		}
	})
}
