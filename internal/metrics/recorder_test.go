package metrics

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/procstat"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// sources maps the files a Sampler reads below its root to the package
// whose testdata holds captures of them.
var sources = map[string]string{
	"stat":             "procstat",
	"softirqs":         "softirqs",
	"net/softnet_stat": "softnet",
}

// useCapture copies one capture step ("fc-2cpu-6.18-t0") of all three
// files into root, overwriting the previous step.
func useCapture(tb testing.TB, root, capture string) {
	tb.Helper()
	for file, pkg := range sources {
		b, err := os.ReadFile(filepath.Join(pkg, "testdata", capture))
		if err != nil {
			tb.Fatal(err)
		}
		writeFile(tb, root, file, string(b))
	}
}

func writeFile(tb testing.TB, root, file, content string) {
	tb.Helper()
	path := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

var t0 = time.Date(2026, 11, 21, 11, 49, 14, 0, time.UTC)

// TestRecorderCaptures runs one one-second window over each captured pair
// and checks the rates against the counters' differences worked out by
// hand from the files.
func TestRecorderCaptures(t *testing.T) {
	type rates struct{ netRx, processed, dropped, squeezed, rps float64 }
	tests := []struct {
		capture string
		ncpu    int
		busiest int
		want    map[int]rates
	}{
		{
			capture: "fc-2cpu-6.18",
			ncpu:    2,
			busiest: 1,
			want: map[int]rates{
				0: {netRx: 580708 - 551551, processed: 0xccad9 - 0xc5696},
				1: {netRx: 531355 - 466336, processed: 0x97c09 - 0x86c3d},
			},
		},
		{
			// CPU2's NET_RX count wraps past 2^32: 4294950000 -> 30917.
			capture: "crafted-4cpu-5.15",
			ncpu:    4,
			busiest: 2,
			want: map[int]rates{
				0: {netRx: 11, processed: 11},
				2: {netRx: 48213, processed: 412345, squeezed: 37},
				3: {netRx: 1, processed: 1},
			},
		},
		{
			// The NIC queue's IRQ is on CPU3; RPS hands packets to 4-7.
			capture: "crafted-20cpu-6.8",
			ncpu:    20,
			busiest: 3,
			want: map[int]rates{
				3: {netRx: 9120, processed: 612004, squeezed: 41},
				4: {netRx: 4412, processed: 151220, squeezed: 2, rps: 4410},
				7: {netRx: 4380, processed: 150911, squeezed: 1, rps: 4377},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			root := t.TempDir()
			useCapture(t, root, tt.capture+"-t0")
			rec := newRecorder(root, time.Second)
			if err := rec.begin(t0); err != nil {
				t.Fatal(err)
			}
			useCapture(t, root, tt.capture+"-t1")
			if err := rec.sample(t0.Add(time.Second), true); err != nil {
				t.Fatal(err)
			}
			w := rec.window()

			if len(w.Cores) != tt.ncpu || len(w.Points) != 1 || len(w.Points[0].Cores) != tt.ncpu {
				t.Fatalf("%d cores, %d points", len(w.Cores), len(w.Points))
			}
			if !w.Start.Equal(t0) || !w.End.Equal(t0.Add(time.Second)) || !w.Points[0].Time.Equal(w.End) {
				t.Errorf("window %v..%v, point at %v", w.Start, w.End, w.Points[0].Time)
			}
			before := parseStat(t, tt.capture+"-t0")
			after := parseStat(t, tt.capture+"-t1")
			for i, c := range w.Cores {
				if c.CPU != i {
					t.Fatalf("core %d is cpu %d", i, c.CPU)
				}
				p, _ := before.Lookup(i)
				n, _ := after.Lookup(i)
				if want := procstat.Percent(p, n); c.CPUPercent != want || w.Points[0].Cores[i].CPUPercent != want {
					t.Errorf("cpu%d: window %+v, point %+v, want %+v", i, c.CPUPercent, w.Points[0].Cores[i], want)
				}
				if r, ok := tt.want[i]; ok {
					got := rates{c.NetRxPerSec, c.ProcessedPerSec, c.DroppedPerSec, c.SqueezedPerSec, c.ReceivedRPSPerSec}
					if got != r {
						t.Errorf("cpu%d rates = %+v, want %+v", i, got, r)
					}
				}
			}
			if got := BusiestNetRxCPU(w.Cores); got != tt.busiest {
				t.Errorf("BusiestNetRxCPU = %d, want %d", got, tt.busiest)
			}
		})
	}
}

func parseStat(tb testing.TB, capture string) *procstat.Stat {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("procstat", "testdata", capture))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := procstat.Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// reading is a minimal machine state: per CPU, jiffies as
// "user system idle" and one value for NET_RX and all softnet counters.
// replay writes each reading under root and has rec take it, a second
// apart: the first begins the window, the last ends it when final.
func replay(t *testing.T, rec *recorder, root string, steps []reading, final bool) {
	t.Helper()
	for i, r := range steps {
		r.write(t, root)
		var err error
		if i == 0 {
			err = rec.begin(t0)
		} else {
			err = rec.sample(t0.Add(time.Duration(i)*time.Second), final && i == len(steps)-1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

type reading struct {
	cpus    []int
	jiffies map[int][3]uint64
	counter map[int]uint64
	// oldSoftnet writes softnet_stat as kernels before the CPU column
	// did (10 columns), for softnetCPUs if set, else for cpus.
	oldSoftnet  bool
	softnetCPUs []int
}

func (r reading) write(tb testing.TB, root string) {
	tb.Helper()
	var st, hdr, rx, sn strings.Builder
	var tot [3]uint64
	for _, c := range r.cpus {
		j := r.jiffies[c]
		tot[0], tot[1], tot[2] = tot[0]+j[0], tot[1]+j[1], tot[2]+j[2]
		fmt.Fprintf(&st, "cpu%d %d 0 %d %d 0 0 0 0 0 0\n", c, j[0], j[1], j[2])
		fmt.Fprintf(&hdr, "CPU%-8d", c)
		fmt.Fprintf(&rx, " %10d", r.counter[c])
	}
	snCPUs := r.cpus
	if r.softnetCPUs != nil {
		snCPUs = r.softnetCPUs
	}
	for _, c := range snCPUs {
		v := r.counter[c]
		if r.oldSoftnet {
			fmt.Fprintf(&sn, "%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 %08x\n", v, v, v, v)
			continue
		}
		fmt.Fprintf(&sn, "%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 %08x 00000000 00000000 %08x 00000000 00000000\n",
			v, v, v, v, c)
	}
	writeFile(tb, root, "stat", fmt.Sprintf("cpu  %d 0 %d %d 0 0 0 0 0 0\n%sintr 0\n", tot[0], tot[1], tot[2], st.String()))
	writeFile(tb, root, "softirqs", fmt.Sprintf("%20s%s\n%12s:%s\n%12s:%s\n", "", hdr.String(), "TIMER", rx.String(), "NET_RX", rx.String()))
	writeFile(tb, root, "net/softnet_stat", sn.String())
}

// Counters that wrap more than once in a window are summed per interval.
func TestRecorderWrapsTwice(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	const step = 3_000_000_000 // per second; the 32-bit counter wraps every 1.4 s
	var steps []reading
	for i, v := 0, uint64(0); i < 4; i, v = i+1, v+step {
		steps = append(steps, reading{
			cpus:    []int{0},
			jiffies: map[int][3]uint64{0: {uint64(10 * i), 0, uint64(100 + 90*i)}},
			counter: map[int]uint64{0: v % (1 << 32)},
		})
	}
	replay(t, rec, root, steps, true)
	w := rec.window()
	c := w.Cores[0]
	for name, got := range map[string]float64{"net_rx": c.NetRxPerSec, "processed": c.ProcessedPerSec,
		"dropped": c.DroppedPerSec, "squeezed": c.SqueezedPerSec, "received_rps": c.ReceivedRPSPerSec} {
		if got != step {
			t.Errorf("%s = %v/s, want %v/s", name, got, float64(step))
		}
	}
	want := results.CPUPercent{User: 10, Idle: 90}
	if !approxPercent(c.CPUPercent, want) || len(w.Points) != 3 {
		t.Fatalf("window %+v with %d points, want %+v and 3", c.CPUPercent, len(w.Points), want)
	}
	for _, p := range w.Points {
		if !approxPercent(p.Cores[0].CPUPercent, want) {
			t.Errorf("point %+v, want %+v", p.Cores[0], want)
		}
	}
}

// A CPU that goes offline and comes back: no points while it has no
// line, no panic, and a window average that follows mpstat's restart rule.
func TestRecorderHotplug(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	steps := []reading{
		{cpus: []int{0, 1}, jiffies: map[int][3]uint64{0: {0, 0, 1000}, 1: {100, 50, 5000}}, counter: map[int]uint64{0: 10, 1: 10}},
		{cpus: []int{0}, jiffies: map[int][3]uint64{0: {10, 0, 1090}}, counter: map[int]uint64{0: 20}},
		// cpu1 is back: user and system kept their values, idle restarted.
		{cpus: []int{0, 1}, jiffies: map[int][3]uint64{0: {20, 0, 1180}, 1: {130, 60, 60}}, counter: map[int]uint64{0: 30, 1: 40}},
		{cpus: []int{0, 1}, jiffies: map[int][3]uint64{0: {30, 0, 1270}, 1: {160, 70, 120}}, counter: map[int]uint64{0: 40, 1: 70}},
	}
	replay(t, rec, root, steps, false)
	w := rec.window()
	var ncores []int
	for _, p := range w.Points {
		ncores = append(ncores, len(p.Cores))
	}
	if fmt.Sprint(ncores) != "[1 1 2]" {
		t.Errorf("cores per point = %v, want [1 1 2]", ncores)
	}
	// Last point for cpu1: user +30, system +10, idle +60: 100 ticks.
	if got, want := w.Points[2].Cores[1], (results.CPUPercent{User: 30, System: 10, Idle: 60}); got.CPU != 1 || !approxPercent(got.CPUPercent, want) {
		t.Errorf("cpu1 last point = %+v, want %+v", got, want)
	}
	// Window for cpu1: first 100/50/5000, last 160/70/120; idle went
	// backwards so counts from 0: 60+20+120 = 200 ticks.
	if got, want := w.Cores[1].CPUPercent, (results.CPUPercent{User: 30, System: 10, Idle: 60}); !approxPercent(got, want) {
		t.Errorf("cpu1 window = %+v, want %+v", got, want)
	}
	// cpu1's counter: 10 -> (offline) -> 40 -> 70 over 3 s.
	if got := w.Cores[1].NetRxPerSec; got != 20 {
		t.Errorf("cpu1 NET_RX = %v/s, want 20", got)
	}
}

// A CPU offline at the window's end is named in Offline, so a mean over
// the cores can leave out its zero percentages (which read as 100% busy
// to 100 - idle); Online drops it.
func TestRecorderOfflineAtEnd(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	steps := []reading{
		{cpus: []int{0, 1}, jiffies: map[int][3]uint64{0: {0, 0, 1000}, 1: {0, 0, 1000}}, counter: map[int]uint64{0: 10, 1: 10}},
		{cpus: []int{0}, jiffies: map[int][3]uint64{0: {10, 0, 1090}}, counter: map[int]uint64{0: 20}},
	}
	replay(t, rec, root, steps, true)
	w := rec.window()
	if len(w.Cores) != 2 || fmt.Sprint(w.Offline) != "[1]" {
		t.Fatalf("cores %+v, offline %v; want two cores, cpu1 offline", w.Cores, w.Offline)
	}
	if on := w.Online(); len(on) != 1 || on[0].CPU != 0 {
		t.Errorf("online cores %+v, want cpu0 only", on)
	}
	// The stored core carries the mark (samples.jsonl's cores), so the
	// analysis leaves its zeros out too.
	if !w.Cores[1].Offline || w.Cores[1].Measured() || w.Cores[0].Offline || !w.Cores[0].Measured() {
		t.Errorf("cores %+v: want cpu1 marked offline, cpu0 measured", w.Cores)
	}
}

// Without a CPU column, softnet lines are matched to /proc/stat's online
// CPUs, and a reading where the two disagree is skipped.
func TestRecorderOldSoftnet(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	j := map[int][3]uint64{0: {0, 0, 0}, 1: {0, 0, 0}, 2: {0, 0, 0}}
	steps := []reading{
		// cpu1 offline: the second line is cpu2.
		{cpus: []int{0, 2}, counter: map[int]uint64{0: 100, 2: 0xffff0000}},
		// cpu1 came online between the reads of /proc/stat and
		// softnet_stat: two lines for three CPUs, skipped.
		{cpus: []int{0, 1, 2}, softnetCPUs: []int{0, 2}, counter: map[int]uint64{0: 200, 1: 5, 2: 0xffff1000}},
		{cpus: []int{0, 1, 2}, counter: map[int]uint64{0: 300, 1: 7, 2: 0x1000}},
	}
	for i := range steps {
		steps[i].jiffies, steps[i].oldSoftnet = j, true
	}
	replay(t, rec, root, steps, false)
	w := rec.window()
	var got []float64
	for _, c := range w.Cores {
		got = append(got, c.ProcessedPerSec)
	}
	// cpu0 +200 and cpu2 +0x11000 (through 2^32) in 2 s; cpu1 has one
	// usable reading only.
	if want := []float64{100, 0, 0x11000 / 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("processed/s by cpu = %v, want %v", got, want)
	}
}

// A final reading soon after the last tick counts in the averages but adds
// no point.
func TestRecorderShortLastInterval(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	steps := []struct {
		at time.Duration
		r  reading
	}{
		{0, reading{cpus: []int{0}, jiffies: map[int][3]uint64{0: {0, 0, 0}}, counter: map[int]uint64{0: 0}}},
		{time.Second, reading{cpus: []int{0}, jiffies: map[int][3]uint64{0: {50, 0, 50}}, counter: map[int]uint64{0: 100}}},
		{1250 * time.Millisecond, reading{cpus: []int{0}, jiffies: map[int][3]uint64{0: {75, 0, 50}}, counter: map[int]uint64{0: 125}}},
	}
	for i, s := range steps {
		s.r.write(t, root)
		var err error
		if i == 0 {
			err = rec.begin(t0)
		} else {
			err = rec.sample(t0.Add(s.at), i == len(steps)-1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	w := rec.window()
	if len(w.Points) != 1 {
		t.Errorf("%d points, want 1", len(w.Points))
	}
	c := w.Cores[0]
	if !approx(c.NetRxPerSec, 100) || !approx(c.User, 60) || !approx(c.Idle, 40) {
		t.Errorf("window core = %+v, want 100 NET_RX/s, user 60%%, idle 40%%", c)
	}
}

func TestRecorderRejects(t *testing.T) {
	root := t.TempDir()
	rec := newRecorder(root, time.Second)
	err := rec.begin(t0)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "stat")) {
		t.Fatalf("missing files: err = %v", err)
	}
	useCapture(t, root, "fc-2cpu-6.18-t0")
	writeFile(t, root, "softirqs", "  CPU0 CPU1\nTIMER: 1 2\n")
	if err := rec.begin(t0); err == nil || !strings.Contains(err.Error(), "NET_RX") {
		t.Fatalf("no NET_RX row: err = %v", err)
	}
	writeFile(t, root, "net/softnet_stat", "garbage\n")
	if err := rec.begin(t0); err == nil || !strings.Contains(err.Error(), "softnet_stat: parse") {
		t.Fatalf("bad softnet_stat: err = %v", err)
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func approxPercent(a, b results.CPUPercent) bool {
	return approx(a.User, b.User) && approx(a.Nice, b.Nice) && approx(a.System, b.System) &&
		approx(a.IOWait, b.IOWait) && approx(a.IRQ, b.IRQ) && approx(a.SoftIRQ, b.SoftIRQ) &&
		approx(a.Steal, b.Steal) && approx(a.Idle, b.Idle)
}

func TestDelta(t *testing.T) {
	for _, tt := range []struct{ prev, cur, want uint64 }{
		{5, 5, 0},
		{5, 9, 4},
		{0xfffffff0, 0x10, 0x20},            // 32-bit wrap
		{math.MaxUint32, 0, 1},              // 32-bit wrap by one
		{1 << 40, 5, 0},                     // 64-bit counter reset
		{0, math.MaxUint64, math.MaxUint64}, // huge increase is taken as is
		{math.MaxUint64, 3, 0},              // 64-bit counter going backwards
		{0xfffffff0, 0x1_0000_0010, 0x20},   // 64-bit counter passing 2^32
	} {
		if got := delta(tt.prev, tt.cur); got != tt.want {
			t.Errorf("delta(%#x, %#x) = %#x, want %#x", tt.prev, tt.cur, got, tt.want)
		}
	}
}

// A window's Poll is each CPU's polling time over the window, from the
// counter at its two ends only: CPU 0 polled 0.5 s of a 2-s window, CPU 1
// has no polling state and no Poll, and a window without an idle reader
// has none either.
func TestRecorderPoll(t *testing.T) {
	root, sys := t.TempDir(), t.TempDir()
	useCapture(t, root, "fc-2cpu-6.18-t0")
	poll := func(us string) {
		writeFile(t, sys, "devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n")
		writeFile(t, sys, "devices/system/cpu/cpu0/cpuidle/state0/time", us+"\n")
		writeFile(t, sys, "devices/system/cpu/cpu1/cpuidle/state0/name", "C1\n")
		writeFile(t, sys, "devices/system/cpu/cpu1/cpuidle/state0/time", us+"\n")
	}
	poll("1000000")
	rec := newRecorder(root, time.Second)
	rec.idle = sysfs.Dir(sys)
	if err := rec.begin(t0); err != nil {
		t.Fatal(err)
	}
	poll("1250000") // a reading in between is not used
	if err := rec.sample(t0.Add(time.Second), false); err != nil {
		t.Fatal(err)
	}
	useCapture(t, root, "fc-2cpu-6.18-t1")
	poll("1500000")
	if err := rec.sample(t0.Add(2*time.Second), true); err != nil {
		t.Fatal(err)
	}
	w := rec.window()
	if len(w.Cores) != 2 || w.Cores[0].Poll == nil || math.Abs(*w.Cores[0].Poll-25) > 1e-9 || w.Cores[1].Poll != nil {
		t.Fatalf("cores = %+v", w.Cores)
	}

	rec = newRecorder(root, time.Second)
	if err := rec.begin(t0); err != nil {
		t.Fatal(err)
	}
	if err := rec.sample(t0.Add(time.Second), true); err != nil {
		t.Fatal(err)
	}
	if w := rec.window(); w.Cores[0].Poll != nil {
		t.Errorf("no idle reader: poll %v", *w.Cores[0].Poll)
	}
}

func TestPollPercent(t *testing.T) {
	first, last := map[int]uint64{0: 10, 1: 50}, map[int]uint64{0: 3_000_010, 1: 40}
	if p := pollPercent(first, last, 0, 2); p == nil || *p != 100 {
		t.Errorf("more than the window is held to 100: %v", p)
	}
	if p := pollPercent(first, last, 1, 2); p != nil {
		t.Errorf("a counter going back: %v", *p)
	}
	if p := pollPercent(first, nil, 0, 2); p != nil {
		t.Errorf("one end unread: %v", *p)
	}
	if p := pollPercent(first, last, 0, 0); p != nil {
		t.Errorf("an empty window: %v", *p)
	}
}
