package softnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Captures in testdata: fc-2cpu-6.18-* was read from a 2-vCPU Firecracker
// VM one second apart while iperf3 ran over loopback (15 columns);
// crafted-* are hand-made in the exact kernel format: a 4-CPU 5.15 host
// (13 columns) and a 20-CPU 6.8 server with RPS (15 columns).

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
		file    string
		columns int
		ncpu    int
		check   int // CPU whose line is compared with want
		want    CPU
	}{
		{"fc-2cpu-6.18-t0", 15, 2, 1, CPU{CPU: 1, Processed: 0x86c3d}},
		{"fc-2cpu-6.18-t1", 15, 2, 0, CPU{CPU: 0, Processed: 0xccad9}},
		{"crafted-4cpu-5.15-t0", 13, 4, 2, CPU{CPU: 2, Processed: 0xe8f11189, Dropped: 0x50a, TimeSqueeze: 0xd7d9b}},
		{"crafted-20cpu-6.8-t1", 15, 20, 4, CPU{CPU: 4, Processed: 0x7eadb2b1, Dropped: 0xc, TimeSqueeze: 0x3571,
			ReceivedRPS: 0x2aba69c, BacklogLen: 3, InputQLen: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Columns != tt.columns || !s.Indexed || len(s.CPUs) != tt.ncpu {
				t.Errorf("columns %d indexed %v cpus %d; want %d true %d", s.Columns, s.Indexed, len(s.CPUs), tt.columns, tt.ncpu)
			}
			got, ok := s.Lookup(tt.check)
			if !ok || got != tt.want {
				t.Errorf("cpu %d = %+v, %v; want %+v", tt.check, got, ok, tt.want)
			}
		})
	}
}

// Each historical layout, with the CPU column where there is one.
func TestParseLayouts(t *testing.T) {
	line := func(cols int, cpu int) string {
		v := []uint32{0x10, 0x1, 0x2, 0, 0, 0, 0, 0, 0x7, 0x9, 0xa, 0xb, uint32(cpu), 0xd, 0xe}
		var f []string
		for _, x := range v[:cols] {
			f = append(f, fmt.Sprintf("%08x", x))
		}
		return strings.Join(f, " ") + "\n"
	}
	for _, cols := range []int{9, 10, 11, 13, 15} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			// CPU 1 offline: lines for CPUs 0 and 2.
			s, err := Parse([]byte(line(cols, 0) + line(cols, 2)))
			if err != nil {
				t.Fatal(err)
			}
			want := CPU{CPU: 2, Processed: 0x10, Dropped: 1, TimeSqueeze: 2}
			if cols > 9 {
				want.ReceivedRPS = 9
			}
			if cols > 10 {
				want.FlowLimitCount = 0xa
			}
			if cols > 11 {
				want.BacklogLen = 0xb
			}
			if cols > 13 {
				want.InputQLen, want.ProcessQLen = 0xd, 0xe
			}
			if cols <= 12 {
				// Without a CPU column the second line is numbered 1 ...
				if s.Indexed || s.CPUs[1].CPU != 1 {
					t.Fatalf("indexed %v, second line cpu %d", s.Indexed, s.CPUs[1].CPU)
				}
				// ... until the online list renumbers it.
				if !s.Renumber([]int{0, 2}) {
					t.Fatal("Renumber refused a matching online list")
				}
			}
			if got := s.CPUs[1]; got != want {
				t.Errorf("second line = %+v, want %+v", got, want)
			}
			if !s.Indexed {
				t.Error("not indexed")
			}
		})
	}
}

func TestRenumberMismatch(t *testing.T) {
	s, err := Parse([]byte("1 0 0 0 0 0 0 0 0 0\n2 0 0 0 0 0 0 0 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Renumber([]int{0, 1, 2}) || s.Indexed || s.CPUs[1].CPU != 1 {
		t.Errorf("Renumber with a different CPU count changed %+v", s)
	}
}

func TestParseRejects(t *testing.T) {
	const ok13 = "00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
	tests := []struct{ name, in, wantErr string }{
		{"empty", "", "no lines"},
		{"blank", "\n\n", "no lines"},
		{"proc stat", "cpu  1 2 3 4 5 6 7 8 9 10\n", `line 1: column 0: bad hex value "cpu"`},
		{"too few", "1 2 3 4 5 6 7 8\n", "line 1: 8 columns, want at least 9"},
		{"not hex", "1 2 3 4 5 6 7 8 g\n", `column 8: bad hex value "g"`},
		{"0x prefix", "0x1 2 3 4 5 6 7 8 9\n", "bad hex value"},
		{"overflow", "1 2 3 4 5 6 7 8 9 10000000000000000\n", "column 9: bad hex value"},
		{"mixed widths", ok13 + "1 2 3 4 5 6 7 8 9 a\n", "line 2: 10 columns after lines of 13"},
		{"cpu repeated", ok13 + ok13, "line 2: cpu 0 after cpu 0"},
		{"cpu too big", "0 0 0 0 0 0 0 0 0 0 0 0 fffffff\n", "bad cpu number"},
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
	var s Stat
	if err := s.Parse(data); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := s.Parse(data); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parse into a used Stat allocates %v times, want 0", allocs)
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
	f.Add([]byte("1 2 3 4 5 6 7 8 9 a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatal("non-nil result with error")
			}
			return
		}
		if len(s.CPUs) == 0 || s.Columns < minColumns || s.Indexed != (s.Columns > colCPU) {
			t.Fatalf("inconsistent %+v", s)
		}
		var b strings.Builder
		for i, c := range s.CPUs {
			if i > 0 && c.CPU <= s.CPUs[i-1].CPU {
				t.Fatalf("cpu order %+v", s.CPUs)
			}
			v := []uint64{c.Processed, c.Dropped, c.TimeSqueeze, 0, 0, 0, 0, 0, 0, c.ReceivedRPS,
				c.FlowLimitCount, c.BacklogLen, uint64(c.CPU), c.InputQLen, c.ProcessQLen}
			for k := range s.Columns {
				x := uint64(0)
				if k < len(v) {
					x = v[k]
				}
				fmt.Fprintf(&b, "%08x ", x)
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
