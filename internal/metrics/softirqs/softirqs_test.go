package softirqs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Captures in testdata: fc-2cpu-6.18-* was read from a 2-vCPU Firecracker
// VM one second apart while iperf3 ran over loopback; crafted-* are
// hand-made in the exact kernel format (a 4-CPU 5.15 host whose CPU2
// NET_RX count wraps past 2^32 between the two reads, a 20-CPU 6.8 server).

var kernelNames = []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestParseCaptures(t *testing.T) {
	tests := []struct {
		file  string
		ncpu  int
		netRx []uint64
	}{
		{"fc-2cpu-6.18-t0", 2, []uint64{551551, 466336}},
		{"fc-2cpu-6.18-t1", 2, []uint64{580708, 531355}},
		{"crafted-4cpu-5.15-t0", 4, []uint64{2210377, 180223, 4294950000, 95122}},
		{"crafted-4cpu-5.15-t1", 4, []uint64{2210388, 180225, 30917, 95123}},
		{"crafted-20cpu-6.8-t0", 20, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.CPUs) != tt.ncpu || s.CPUs[0] != 0 || s.CPUs[tt.ncpu-1] != tt.ncpu-1 {
				t.Errorf("CPUs = %v, want 0..%d", s.CPUs, tt.ncpu-1)
			}
			if !slices.Equal(s.Names, kernelNames) {
				t.Errorf("Names = %v, want %v", s.Names, kernelNames)
			}
			row := s.Row(NetRx)
			if len(row) != tt.ncpu {
				t.Fatalf("NET_RX row has %d counts", len(row))
			}
			if tt.netRx != nil && !slices.Equal(row, tt.netRx) {
				t.Errorf("NET_RX = %v, want %v", row, tt.netRx)
			}
		})
	}
}

func TestCount(t *testing.T) {
	// Column names, not positions, identify CPUs: CPU1 is absent here.
	s, err := Parse([]byte("                    CPU0       CPU2       CPU3\n" +
		"      NET_TX:          1          2          3\n" +
		"      NET_RX:         10         20         30\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cpu  int
		want uint64
		ok   bool
	}{
		{NetRx, 0, 10, true}, {NetRx, 2, 20, true}, {NetRx, 3, 30, true}, {NetTx, 3, 3, true},
		{NetRx, 1, 0, false}, {"TIMER", 0, 0, false},
	} {
		got, ok := s.Count(tt.name, tt.cpu)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Count(%s, %d) = %d, %v; want %d, %v", tt.name, tt.cpu, got, ok, tt.want, tt.ok)
		}
	}
	if r := s.Row("TIMER"); r != nil {
		t.Errorf("Row(TIMER) = %v, want nil", r)
	}
}

func TestParseRejects(t *testing.T) {
	const hdr = "                    CPU0       CPU1\n"
	tests := []struct{ name, in, wantErr string }{
		{"empty", "", "no CPU header"},
		{"header only", hdr, "no softirq rows"},
		{"proc stat", "cpu  1 2 3 4\ncpu0 1 2 3 4\n", `line 1: bad CPU column name "cpu"`},
		{"no header", "      NET_RX:         10         20\n", "line 1: bad CPU column name"},
		{"bad column name", "  CPU0  CPUx\n", `bad CPU column name "CPUx"`},
		{"leading zero", "  CPU0  CPU01\n", "bad CPU column name"},
		{"huge cpu", "  CPU0  CPU123456789\n", "bad CPU column name"},
		{"duplicate cpu", "  CPU0  CPU0\n", "column CPU0 after CPU0"},
		{"short row", hdr + "NET_RX: 1\n", "line 2: NET_RX has 1 counts for 2 CPUs"},
		{"long row", hdr + "NET_RX: 1 2 3\n", "NET_RX has 3 counts for 2 CPUs"},
		{"no colon", hdr + "NET_RX 1 2\n", `line 2: bad softirq name "NET_RX"`},
		{"empty name", hdr + ": 1 2\n", "bad softirq name"},
		{"bad count", hdr + "NET_RX: 1 x\n", `NET_RX column 2: bad count "x"`},
		{"negative", hdr + "NET_RX: 1 -2\n", "bad count"},
		{"duplicate row", hdr + "NET_RX: 1 2\nNET_RX: 1 2\n", "line 3: softirq NET_RX listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseReusesStorage(t *testing.T) {
	data := readTestdata(t, "crafted-20cpu-6.8-t0")
	var s Softirqs
	if err := s.Parse(data); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := s.Parse(data); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parse into a used Softirqs allocates %v times, want 0", allocs)
	}
	// A different file into the same value must not keep stale rows.
	if err := s.Parse([]byte("  CPU0\nX: 1\n")); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Names, []string{"X"}) || !slices.Equal(s.Row("X"), []uint64{1}) || s.Row(NetRx) != nil {
		t.Errorf("after reparse: %+v", s)
	}
}

// FuzzParse checks that Parse never panics and that what it accepts is
// consistent and prints back to a file that parses the same.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*-t[01]")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("CPU0 CPU7\nA: 1 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatal("non-nil result with error")
			}
			return
		}
		if len(s.CPUs) == 0 || len(s.Names) == 0 || len(s.counts) != len(s.CPUs)*len(s.Names) {
			t.Fatalf("inconsistent %+v", s)
		}
		var b strings.Builder
		for _, c := range s.CPUs {
			fmt.Fprintf(&b, " CPU%d", c)
		}
		b.WriteString("\n")
		for _, n := range s.Names {
			fmt.Fprintf(&b, "%s:", n)
			for _, v := range s.Row(n) {
				fmt.Fprintf(&b, " %d", v)
			}
			b.WriteString("\n")
		}
		again, err := Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("reparse %q: %v", b.String(), err)
		}
		if fmt.Sprint(again) != fmt.Sprint(s) {
			t.Fatalf("reparse = %+v, want %+v", again, s)
		}
	})
}
