package cpuidle

import (
	"encoding/binary"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzPollTimes: the CPU directory's entries and each CPU's state0 come
// from sysfs (a cluster node's through its agent). A time is recorded
// only for an entry named cpuN (N as the kernel prints it) whose state0
// is POLL, as the count its time file says; a time that is not a count
// is an error, never a zero.
func FuzzPollTimes(f *testing.F) {
	f.Add("cpu0,cpu1,cpu3,cpufreq,online", "POLL", "123456789012", "C1", "5")
	f.Add("cpu0,cpu01,cpu-1,cpu+2", "POLL", "0", "POLL", "-1")
	f.Add("cpu0,cpu0", "POLL\n", " 7 ", "POLL", "soon")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, entries, name0, time0, name1, time1 string) {
		m := memSysfs{files: map[string]string{}, dirs: map[string][]string{Dir: strings.Split(entries, ",")}}
		vals := [][2]string{{name0, time0}, {name1, time1}}
		for i, e := range m.dirs[Dir] {
			v := vals[i%2]
			m.files[path.Join(Dir, e, "cpuidle/state0/name")] = v[0]
			m.files[path.Join(Dir, e, "cpuidle/state0/time")] = v[1]
		}
		got, err := PollTimes(m)
		if err != nil {
			return
		}
		for cpu, us := range got {
			e := "cpu" + strconv.Itoa(cpu)
			name, _ := m.Read(path.Join(Dir, e, "cpuidle/state0/name"))
			text, _ := m.Read(path.Join(Dir, e, "cpuidle/state0/time"))
			if cpu < 0 || name != PollName {
				t.Fatalf("entries %q: CPU %d recorded (state0 %q)", entries, cpu, name)
			}
			if n, err := strconv.ParseUint(text, 10, 64); err != nil || n != us {
				t.Errorf("CPU %d: time %q recorded as %d", cpu, text, us)
			}
		}
		for _, e := range m.dirs[Dir] {
			n, err := strconv.Atoi(strings.TrimPrefix(e, "cpu"))
			name, _ := m.Read(path.Join(Dir, e, "cpuidle/state0/name"))
			if _, ok := got[n]; err == nil && e == "cpu"+strconv.Itoa(n) && n >= 0 && name == PollName && !ok {
				t.Errorf("%s polls (state0 %s) and has no time recorded: %v", e, name, got)
			}
		}
	})
}

// FuzzReadDMALatency: /dev/cpu_dma_latency reads as four bytes, an s32
// in the host's byte order (kernel/power/qos.c, cpu_latency_qos_read).
// Fewer is an error; more (no kernel gives more) reads the first four.
func FuzzReadDMALatency(f *testing.F) {
	var def, one [4]byte
	binary.NativeEndian.PutUint32(def[:], DefaultDMALatencyUS)
	binary.NativeEndian.PutUint32(one[:], 1)
	for _, b := range [][]byte{def[:], one[:], {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {1, 2, 3}, nil, []byte("2000000000\n")} {
		f.Add(b)
	}
	file := filepath.Join(f.TempDir(), "cpu_dma_latency")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := ReadDMALatency(file)
		if len(b) < 4 {
			if err == nil {
				t.Errorf("%d bytes read as %d, want an error", len(b), v)
			}
			return
		}
		if want := int64(int32(binary.NativeEndian.Uint32(b))); err != nil || v != want {
			t.Errorf("% x read as %d, %v; want %d", b[:4], v, err, want)
		}
	})
}
