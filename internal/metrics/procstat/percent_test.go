package procstat

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// TestPercentMatchesMpstat compares Percent with what sysstat's mpstat
// printed for the same pair of /proc/stat files, to its two decimals.
func TestPercentMatchesMpstat(t *testing.T) {
	for _, name := range []string{"fc-2cpu-6.18", "crafted-4cpu-5.15", "crafted-20cpu-6.8", "edge-6cpu"} {
		t.Run(name, func(t *testing.T) {
			prev, err := Parse(readTestdata(t, name+"-t0"))
			if err != nil {
				t.Fatal(err)
			}
			cur, err := Parse(readTestdata(t, name+"-t1"))
			if err != nil {
				t.Fatal(err)
			}
			want := readMpstat(t, name+".mpstat")
			if len(want) != len(cur.CPUs) {
				t.Fatalf("mpstat printed %d CPUs, /proc/stat has %d online", len(want), len(cur.CPUs))
			}
			for _, c := range cur.CPUs {
				p, _ := prev.Lookup(c.ID)
				got := Percent(p, c.Times)
				w, ok := want[c.ID]
				if !ok {
					t.Fatalf("mpstat printed no line for cpu%d", c.ID)
				}
				if !near(got, w, 0.005+1e-9) {
					t.Errorf("cpu%d: Percent = %+v\nmpstat printed %+v", c.ID, got, w)
				}
			}
		})
	}
}

// readMpstat reads the per-CPU lines of `mpstat -P ALL` output.
func readMpstat(tb testing.TB, name string) map[int]results.CPUPercent {
	tb.Helper()
	out := map[int]results.CPUPercent{}
	sc := bufio.NewScanner(bytes.NewReader(readTestdata(tb, name)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 12 {
			continue
		}
		cpu, err := strconv.Atoi(f[1])
		if err != nil {
			continue // header or "all"
		}
		var v [10]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[2+i], 64); err != nil {
				tb.Fatalf("%s: %q: %v", name, sc.Text(), err)
			}
		}
		// %usr %nice %sys %iowait %irq %soft %steal %guest %gnice %idle
		out[cpu] = results.CPUPercent{User: v[0], Nice: v[1], System: v[2], IOWait: v[3],
			IRQ: v[4], SoftIRQ: v[5], Steal: v[6], Idle: v[9]}
	}
	return out
}

func near(a, b results.CPUPercent, tol float64) bool {
	x, y := fields(a), fields(b)
	for i := range x {
		if math.Abs(x[i]-y[i]) > tol {
			return false
		}
	}
	return true
}

func fields(p results.CPUPercent) [8]float64 {
	return [8]float64{p.User, p.Nice, p.System, p.IOWait, p.IRQ, p.SoftIRQ, p.Steal, p.Idle}
}

// Hand-computed cases for the rules mpstat applies.
func TestPercentRules(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur Times
		want      results.CPUPercent
	}{
		{
			// cpu0 of fc-2cpu-6.18: deltas user 2, system 29, idle 42,
			// softirq 5, nothing else: 78 ticks.
			name: "captured cpu0",
			prev: Times{User: 2727, System: 2137, Idle: 22143, IOWait: 48, SoftIRQ: 435, Steal: 14},
			cur:  Times{User: 2729, System: 2166, Idle: 22185, IOWait: 48, SoftIRQ: 440, Steal: 14},
			want: results.CPUPercent{User: 200.0 / 78, System: 2900.0 / 78, SoftIRQ: 500.0 / 78, Idle: 4200.0 / 78},
		},
		{
			// user +61 of which guest +45, nice +3 of which guest_nice +2:
			// the interval is 100 ticks and guest time is not user time.
			name: "guest excluded",
			prev: Times{User: 1000, Nice: 10, System: 100, Idle: 1000, Guest: 500, GuestNice: 5},
			cur:  Times{User: 1061, Nice: 13, System: 106, Idle: 1030, Guest: 545, GuestNice: 7},
			want: results.CPUPercent{User: 16, Nice: 1, System: 6, Idle: 30},
		},
		{
			name: "tickless idle", prev: Times{User: 5, Idle: 10}, cur: Times{User: 5, Idle: 10},
			want: results.CPUPercent{Idle: 100},
		},
		{
			name: "offline now", prev: Times{User: 5, Idle: 10}, cur: Times{},
			want: results.CPUPercent{},
		},
		{
			// Back online: idle and iowait restarted from 0, so their
			// previous values count as 0: 30 user + 10 system + 60 idle +
			// 2 iowait = 102 ticks.
			name: "idle restarted",
			prev: Times{User: 200, System: 60, Idle: 5000, IOWait: 40},
			cur:  Times{User: 230, System: 70, Idle: 60, IOWait: 2},
			want: results.CPUPercent{User: 3000.0 / 102, System: 1000.0 / 102, IOWait: 200.0 / 102, Idle: 6000.0 / 102},
		},
		{
			// iowait re-accounted as idle: iowait -5, idle +90; the
			// previous iowait is taken as the current one.
			name: "iowait moved to idle",
			prev: Times{User: 300, System: 70, Idle: 2000, IOWait: 50},
			cur:  Times{User: 310, System: 75, Idle: 2090, IOWait: 45},
			want: results.CPUPercent{User: 1000.0 / 105, System: 500.0 / 105, Idle: 9000.0 / 105},
		},
		{
			// system went backwards by 1: 0%, and the interval shrinks.
			name: "counter backwards",
			prev: Times{User: 600, System: 900, Idle: 4000},
			cur:  Times{User: 650, System: 899, Idle: 4051},
			want: results.CPUPercent{User: 5000.0 / 100, Idle: 5100.0 / 100},
		},
		{
			// guest +45 but user only +40: user-guest fell by 5, so 0%
			// user and the interval grows by 5 to 40+5+50+5 = 100.
			name: "guest ahead of user",
			prev: Times{User: 500, System: 80, Idle: 3000, Guest: 400},
			cur:  Times{User: 540, System: 85, Idle: 3050, Guest: 445},
			want: results.CPUPercent{System: 5, Idle: 50},
		},
		{
			// user-guest wraps from -2 to 5 as in mpstat's unsigned
			// arithmetic: 0% user, interval 10+90-7 = 93.
			name: "guest larger than user",
			prev: Times{User: 10, Idle: 100, Guest: 12},
			cur:  Times{User: 20, Idle: 190, Guest: 15},
			want: results.CPUPercent{Idle: 9000.0 / 93},
		},
		{
			name: "everything backwards",
			prev: Times{User: 100, System: 100, Idle: 100, Steal: 100},
			cur:  Times{User: 50, System: 50, Idle: 200, Steal: 10},
			want: results.CPUPercent{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Percent(tt.prev, tt.cur)
			if !near(got, tt.want, 1e-9) {
				t.Errorf("Percent = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

// checkPercent fails if Percent of a pair is not a finite, non-negative
// split.
func checkPercent(t *testing.T, prev, cur Times) {
	t.Helper()
	p := Percent(prev, cur)
	for _, v := range fields(p) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("Percent(%+v, %+v) = %+v", prev, cur, p)
		}
	}
}

func FuzzPercent(f *testing.F) {
	f.Add(uint64(2727), uint64(0), uint64(2137), uint64(22143), uint64(48), uint64(0), uint64(435), uint64(14), uint64(0), uint64(0),
		uint64(2729), uint64(0), uint64(2166), uint64(22185), uint64(48), uint64(0), uint64(440), uint64(14), uint64(0), uint64(0))
	f.Add(uint64(500), uint64(20), uint64(80), uint64(3000), uint64(0), uint64(0), uint64(5), uint64(0), uint64(400), uint64(15),
		uint64(540), uint64(21), uint64(85), uint64(3050), uint64(0), uint64(0), uint64(5), uint64(0), uint64(445), uint64(15))
	max := ^uint64(0)
	f.Add(max, max, max, max, max, max, max, max, max, max, uint64(1), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), max, max)
	f.Fuzz(func(t *testing.T, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9 uint64) {
		checkPercent(t, Times{a0, a1, a2, a3, a4, a5, a6, a7, a8, a9}, Times{b0, b1, b2, b3, b4, b5, b6, b7, b8, b9})
	})
}
