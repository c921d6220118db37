package cpp

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readData(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Files named *.model.txt are not captured: this machine (an AMD EPYC VM
// under Linux 6.18, perf 6.1) cannot count hardware cycles, so the
// supported, not-counted and hybrid cases are written after perf-stat(1)'s
// CSV FORMAT section (value;unit;event;run time;percentage;metric;metric
// unit) and the shape of the real cpu-clock line on this machine
// ("2.73;msec;cpu-clock;2735945;100.00;2.010;CPUs utilized"). The other
// files are real output of `perf stat -a -x ';' -e cycles -- true` here
// (testdata/README.md).
func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		file      string
		countable bool
		value     float64
		reason    string // substring of Reason
	}{
		{"stat-cycles-not-supported.txt", false, 0, "<not supported> (cycles)"},
		{"stat-cycles-u-not-supported.txt", false, 0, "<not supported> (cycles:u)"},
		{"stat-cycles-supported.model.txt", true, 4731962, ""},
		{"stat-cycles-not-counted.model.txt", false, 0, "<not counted>"},
		{"stat-cycles-hybrid.model.txt", true, 3120554, ""},
	} {
		st, err := ParseStat(readData(t, tc.file), "cycles")
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if st.Countable != tc.countable || st.Value != tc.value || !strings.Contains(st.Reason, tc.reason) || (tc.countable && st.Reason != "") {
			t.Errorf("%s: %+v", tc.file, st)
		}
	}
}

func TestParseStatEdges(t *testing.T) {
	for in, want := range map[string]string{
		// perf fell back to user-space counting: no kernel cycles.
		"812;;cycles:u;2000;100.00;;\n": "only cycles:u",
		"0;;cycles;2000;100.00;;\n":     "counted 0",
		// Another event's line says nothing about cycles.
		"2.73;msec;cpu-clock;2735945;100.00;2.010;CPUs utilized\n": "error",
		"":                             "error",
		"garbage;;cycles;1;100.00;;\n": "error",
		"-5;;cycles;1;100.00;;\n":      "error",
	} {
		st, err := ParseStat([]byte(in), "cycles")
		got := st.Reason
		if err != nil {
			got = "error"
		}
		if !strings.Contains(got, want) || st.Countable {
			t.Errorf("%q: %+v %v, want %q", in, st, err, want)
		}
	}
	// A perf error: no count line; the error quotes perf's first line.
	_, err := ParseStat(readData(t, "stat-error-unprivileged.txt"), "cycles")
	if err == nil || !strings.Contains(err.Error(), "Error:") {
		t.Errorf("perf error parsed: %v", err)
	}
}

// fakePerf answers the counting probe with a file's content and an
// error, and the sampling probe (perf record) with success.
func fakePerf(t *testing.T, file string, err error) RunFunc {
	return func(_ context.Context, argv []string) ([]byte, error) {
		if len(argv) > 3 && argv[1] == "record" {
			if !slices.Equal(argv, RecordProbeArgv(argv[len(argv)-3])) {
				t.Errorf("argv %q", argv)
			}
			return nil, nil
		}
		if !slices.Equal(argv, StatArgv()) {
			t.Errorf("argv %q", argv)
		}
		if file == "" {
			return nil, err
		}
		return readData(t, file), err
	}
}

func TestChooseEvent(t *testing.T) {
	exit255 := errors.New("exit status 255")
	for _, tc := range []struct {
		name   string
		run    RunFunc
		event  string
		reason string
	}{
		{"not supported (this machine)", fakePerf(t, "stat-cycles-not-supported.txt", nil), "cpu-clock", "not countable here"},
		{"supported (modelled)", fakePerf(t, "stat-cycles-supported.model.txt", nil), "cycles", "counted 4731962"},
		{"not counted (modelled)", fakePerf(t, "stat-cycles-not-counted.model.txt", nil), "cpu-clock", "<not counted>"},
		{"perf refused", fakePerf(t, "stat-error-unprivileged.txt", exit255), "cpu-clock", "exit status 255"},
		{"counted, not sampled (modelled)", func(ctx context.Context, argv []string) ([]byte, error) {
			if argv[1] == "record" {
				return []byte("Error:\nPMU Hardware doesn't support sampling/overflow-interrupts. Try 'perf stat'\n"), exit255
			}
			return fakePerf(t, "stat-cycles-supported.model.txt", nil)(ctx, argv)
		}, "cpu-clock", "cannot be sampled here (perf record -q -a --no-buildid --no-buildid-cache -e cycles -c 2000000 -o"},
		{"perf missing", fakePerf(t, "", errors.New(`exec: "perf": executable file not found in $PATH`)), "cpu-clock", "executable file not found"},
	} {
		ev := ChooseEvent(context.Background(), tc.run)
		if ev.Name != tc.event || !strings.Contains(ev.Reason, tc.reason) {
			t.Errorf("%s: %+v", tc.name, ev)
		}
		want := CPUClock
		if tc.event == "cycles" {
			want = Cycles
		}
		if ev.Period != want.Period || ev.Unit != want.Unit {
			t.Errorf("%s: period %d unit %s", tc.name, ev.Period, ev.Unit)
		}
		if !strings.Contains(ev.Reason, "perf stat -a -x ; -e cycles -- true") {
			t.Errorf("%s: reason does not name the probe: %s", tc.name, ev.Reason)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	files, _ := filepath.Glob("testdata/stat-*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("1;;cpu_core/cycles:k/;1;100.00;;\n<not supported>;;cpu_atom/cycles/;0;100.00;;\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStat(b, "cycles")
		if err != nil {
			return
		}
		if st.Countable && (!(st.Value > 0) || math.IsInf(st.Value, 0) || st.Reason != "") {
			t.Errorf("countable with %+v", st)
		}
		if !st.Countable && st.Reason == "" {
			t.Errorf("not countable without a reason: %+v", st)
		}
	})
}

// A perf on PATH that does not run (Ubuntu's wrapper without the running
// kernel's linux-tools package) is refused with what to install, not
// taken for a perf that would fail every sampled trial.
func TestCheckRefusesPerfThatDoesNotRun(t *testing.T) {
	dir := t.TempDir()
	wrapper := "#!/bin/sh\necho 'WARNING: perf not found for kernel 6.8.0-31' >&2\nexit 2\n"
	if err := os.WriteFile(filepath.Join(dir, "perf"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	err := Check()
	if err == nil || !strings.Contains(err.Error(), "WARNING: perf not found for kernel 6.8.0-31") ||
		!strings.Contains(err.Error(), "linux-tools-$(uname -r)") {
		t.Errorf("Check with a perf that does not run: %v", err)
	}
}
