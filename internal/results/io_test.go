package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func testSample(trial int) Sample {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return Sample{
		Cell:    Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 2},
		Trial:   trial,
		Start:   t0,
		End:     t0.Add(30 * time.Second),
		Metrics: map[string]float64{MetricBitrate: 9.5e9, MetricRetransmits: 3},
		Cores:   []CoreStat{{CPU: 0, CPUPercent: CPUPercent{Idle: 80, SoftIRQ: 5}, NetRxPerSec: 1200}},
	}
}

func newRun(t *testing.T) (*Writer, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

func TestWriteLoadRoundTrip(t *testing.T) {
	w, dir := newRun(t)
	study := []byte("apiVersion: cnibench/v1alpha1\nkind: Study\n")
	env := Env{Tool: "cnibench", Kernel: "6.1.0", CPUs: 4, NodeCPUs: map[string][]int{"server": {0, 1}}, Notes: []string{"n"},
		CNI: &CNI{Name: "flannel", Mode: "vxlan", Evidence: []string{"device flannel.1"}}}
	cpu := []CPUPoint{
		{Cell: testSample(0).Cell, CPU: 0, Time: time.Unix(10, 0).UTC(), CPUPercent: CPUPercent{Idle: 90}},
		{Cell: testSample(0).Cell, CPU: 1, Time: time.Unix(10, 0).UTC(), CPUPercent: CPUPercent{Idle: 70}},
	}
	if err := w.WriteStudy(study); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEnv(env); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.AppendSample(testSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AppendCPU(cpu); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.AppendSample(testSample(9)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("append after Close: %v, want ErrClosed", err)
	}

	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings: %v", r.Warnings)
	}
	if string(r.Study) != string(study) {
		t.Errorf("study = %q", r.Study)
	}
	if !r.HasEnv || !reflect.DeepEqual(r.Env, env) {
		t.Errorf("env = %+v", r.Env)
	}
	if len(r.Samples) != 3 || !reflect.DeepEqual(r.Samples[2], testSample(2)) {
		t.Errorf("samples = %+v", r.Samples)
	}
	if !reflect.DeepEqual(r.CPU, cpu) {
		t.Errorf("cpu = %+v", r.CPU)
	}
	// No temp files are left behind by the atomic writes.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left over %s", e.Name())
		}
	}
}

func TestCreateRefusesExistingRun(t *testing.T) {
	w, dir := newRun(t)
	w.Close()
	if _, err := Create(dir); !errors.Is(err, ErrRunExists) {
		t.Fatalf("Create on a run directory: %v, want ErrRunExists", err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	w, dir := newRun(t)
	if err := w.WriteStudy([]byte("x: 1\n")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if err := w.AppendSample(testSample(g*10 + i)); err != nil {
					t.Error(err)
				}
				if err := w.AppendCPU([]CPUPoint{{Cell: cellOf("a"), CPU: g}, {Cell: cellOf("a"), CPU: i}}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	w.Close()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 80 || len(r.CPU) != 160 {
		t.Errorf("got %d samples, %d CPU points; want 80, 160", len(r.Samples), len(r.CPU))
	}
}

// writeRaw builds a run directory by hand, as a crash may have left it.
func writeRaw(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodLine = `{"cell":{"datapath":"d","tuning":"baseline","workload":"tcp","replicas":1},"trial":0,"metrics":{"bitrate":1e9}}`

func TestLoadTolerance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		samples  string
		nSamples int
		warnings int    // besides the missing env.json and cpu.jsonl
		errLine  string // "" for success, else "samples.jsonl:N"
	}{
		{"clean", goodLine + "\n" + goodLine + "\n", 2, 0, ""},
		{"blank lines", goodLine + "\n\n" + goodLine + "\n", 2, 0, ""},
		{"truncated last line", goodLine + "\n" + goodLine[:40], 1, 1, ""},
		{"complete last line without newline", goodLine + "\n" + goodLine, 2, 0, ""},
		{"truncated only line", goodLine[:10], 0, 1, ""},
		{"corrupt middle line", goodLine + "\n" + goodLine[:40] + "\n" + goodLine + "\n", 0, 0, "samples.jsonl:2"},
		{"corrupt last line with newline", goodLine + "\n{oops}\n", 0, 0, "samples.jsonl:2"},
		{"not an object", "null\n" + goodLine + "\n", 0, 0, "samples.jsonl:1"},
		{"wrong type", `{"trial":"x"}` + "\n", 0, 0, "samples.jsonl:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRaw(t, map[string]string{StudyFile: "a: 1\n", SamplesFile: tc.samples})
			r, err := Load(dir)
			if tc.errLine != "" {
				var le *LineError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.errLine+":") {
					t.Fatalf("err = %v, want a LineError at %s", err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Samples) != tc.nSamples {
				t.Errorf("%d samples, want %d", len(r.Samples), tc.nSamples)
			}
			if got := len(r.Warnings) - 2; got != tc.warnings {
				t.Errorf("warnings %q, want %d besides the missing files", r.Warnings, tc.warnings)
			}
			if r.HasEnv {
				t.Error("HasEnv without env.json")
			}
		})
	}
}

func TestLoadNeedsStudy(t *testing.T) {
	dir := writeRaw(t, map[string]string{SamplesFile: goodLine + "\n"})
	if _, err := Load(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist for study.yaml", err)
	}
}

// Kube runs before Env.CNI recorded the CNI as the tool "cni".
func TestLoadOldCNI(t *testing.T) {
	for old, want := range map[string]CNI{
		"calico (vxlan)": {Name: "calico", Mode: "vxlan"},
		"bridge":         {Name: "bridge"},
	} {
		dir := writeRaw(t, map[string]string{StudyFile: "a: 1\n", EnvFile: `{"engine":"kube","tools":{"iperf3":"3.12","cni":"` + old + `"}}`})
		r, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if r.Env.CNI == nil || !reflect.DeepEqual(*r.Env.CNI, want) {
			t.Errorf("%q: CNI %+v, want %+v", old, r.Env.CNI, want)
		}
		if _, ok := r.Env.Tools["cni"]; ok || r.Env.Tools["iperf3"] != "3.12" {
			t.Errorf("%q: tools %v", old, r.Env.Tools)
		}
		if s := r.Env.CNI.String(); s != old {
			t.Errorf("String() = %q, want %q", s, old)
		}
	}
}

func TestLoadBadEnv(t *testing.T) {
	dir := writeRaw(t, map[string]string{StudyFile: "a: 1\n", EnvFile: "{"})
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), EnvFile) {
		t.Fatalf("err = %v, want an error naming env.json", err)
	}
}

// FuzzLoadSamples checks that no input crashes the loader and that every
// rejection names the offending line.
func FuzzLoadSamples(f *testing.F) {
	f.Add(goodLine + "\n")
	f.Add(goodLine[:33])
	f.Add("\n\n{}\n")
	f.Fuzz(func(t *testing.T, text string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, StudyFile), []byte("a: 1\n"), 0o644)
		os.WriteFile(filepath.Join(dir, SamplesFile), []byte(text), 0o644)
		r, err := Load(dir)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if len(r.Samples) > strings.Count(text, "\n")+1 {
			t.Fatalf("%d samples from %d lines", len(r.Samples), strings.Count(text, "\n")+1)
		}
	})
}

// Reopen cuts the partial line a kill leaves and appends after it, so the
// resumed run's first sample starts on a line of its own.
func TestReopenCutsPartialLine(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte("apiVersion: x\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEnv(Env{Tool: "cnibench"}); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSample(Sample{Cell: cellOf("a"), Trial: 1, Metrics: map[string]float64{"bitrate": 1}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, _ := os.OpenFile(filepath.Join(dir, SamplesFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"cell":{"datapath":"bridge","tuning":"b","workload":"tcp","replicas":1},"tri`)
	f.Close()
	w, err = Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSample(Sample{Cell: cellOf("b"), Trial: 1, Metrics: map[string]float64{"bitrate": 2}}); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSample(Sample{Cell: cellOf("b"), Trial: 2, Attempt: 1, Error: "iperf3 died", Discarded: "failed"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 2 || len(r.Marked) != 1 || len(r.Warnings) != 0 {
		t.Fatalf("samples %d marked %d warnings %v; want 2, 1, none", len(r.Samples), len(r.Marked), r.Warnings)
	}
	if r.Marked[0].Error != "iperf3 died" {
		t.Errorf("marked %+v", r.Marked[0])
	}
}

// A whole last line that only lacks its newline is counted by Load
// (--resume skips its trial), so Reopen must keep it, ended, not cut it:
// else the resumed run loses a trial it will not run again.
func TestReopenKeepsCompleteLastLine(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte("apiVersion: x\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSample(Sample{Cell: cellOf("a"), Trial: 1, Metrics: map[string]float64{"bitrate": 1}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, _ := os.OpenFile(filepath.Join(dir, SamplesFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"cell":{"datapath":"bridge","tuning":"a","workload":"tcp","replicas":1},"trial":2,"metrics":{"bitrate":2}}`) // killed before the '\n'
	f.Close()
	before, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err = Reopen(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSample(Sample{Cell: cellOf("a"), Trial: 3, Metrics: map[string]float64{"bitrate": 3}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	after, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Samples) != 2 || len(after.Samples) != 3 || len(after.Warnings) != 1 {
		t.Fatalf("Load counted %d samples before Reopen, %d after one more (warnings %v); want 2, 3 and only the missing env.json's",
			len(before.Samples), len(after.Samples), after.Warnings)
	}
}

func cellOf(tuning string) Cell {
	return Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}
}

// A line that parses but is no record of a cell (a hand edit, another
// file's line) is an error naming it, not a sample counted into no
// table; a line cut by a crash is still dropped with a warning.
func TestLoadRejectsLinesWithoutACell(t *testing.T) {
	good := `{"cell":{"datapath":"bridge","tuning":"a","workload":"tcp","replicas":1},"trial":1,"metrics":{"bitrate":1}}`
	for _, tc := range []struct{ file, line, want string }{
		{SamplesFile, `{"nope": 1}`, "samples.jsonl:2: cell.datapath, cell.tuning, cell.workload missing"},
		{SamplesFile, `{"cell":{"datapath":"bridge","tuning":"a","replicas":1},"trial":2}`, "samples.jsonl:2: cell.workload missing"},
		{SamplesFile, `{"cell":{"datapath":"bridge","tuning":"a","workload":"tcp","replicas":1},"trial":-2}`, "samples.jsonl:2: trial: -2 is negative"},
		{SamplesFile, `{"cell":{"datapath":"bridge","tuning":"a","workload":"tcp","replicas":-1},"trial":2}`, "samples.jsonl:2: cell.replicas: -1 is negative"},
		{CPUFile, `{"cpu": 0, "idle": 90}`, "cpu.jsonl:1: cell.datapath, cell.tuning, cell.workload missing"},
	} {
		files := map[string]string{StudyFile: "a: 1\n", SamplesFile: good + "\n", CPUFile: ""}
		files[tc.file] += tc.line + "\n"
		_, err := Load(writeRaw(t, files))
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s line %s: err = %v, want a LineError containing %q", tc.file, tc.line, err, tc.want)
		}
	}
	files := map[string]string{StudyFile: "a: 1\n", SamplesFile: good + "\n" + `{"nope": 1}`}
	r, err := Load(writeRaw(t, files))
	if err != nil || len(r.Samples) != 1 || !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "truncated last line") }) {
		t.Errorf("an unended last line without a cell: err %v, %d samples, warnings %q; want it dropped with a warning", err, len(r.Samples), r.Warnings)
	}
}

// A trial removed from samples.jsonl after the run leaves stops.json
// counting it: the page would show a decision over trials its tables no
// longer hold, so Load warns, naming the cell. A given-up cell's last
// round is in its stop's count without a counted trial, and agrees.
func TestLoadWarnsWhenStopsCountOtherTrials(t *testing.T) {
	line := func(tuning string, trial int) string {
		return fmt.Sprintf(`{"cell":{"datapath":"bridge","tuning":%q,"workload":"tcp","replicas":1},"trial":%d,"metrics":{"bitrate":1}}`+"\n", tuning, trial)
	}
	stops := func(st ...Stop) string {
		b, _ := json.Marshal(st)
		return string(b)
	}
	samples := line("a", 1) + line("b", 1) + line("a", 2) + line("b", 2)
	for _, tc := range []struct {
		name, samples, stops, want string
	}{
		{"agree", samples, stops(Stop{Cell: cellOf("a"), N: 2}, Stop{Cell: cellOf("b"), N: 2}), ""},
		{"given up", samples, stops(Stop{Cell: cellOf("a"), N: 2}, Stop{Cell: cellOf("b"), N: 3, Failed: "trial 3 failed 3 attempts"}), ""},
		{"removed", line("a", 1) + line("b", 1) + line("b", 2), stops(Stop{Cell: cellOf("a"), N: 2}, Stop{Cell: cellOf("b"), N: 2}),
			"stops.json and samples.jsonl count different trials for 1 cell (bridge/a/tcp/r=1 stopped after 2, samples.jsonl holds 1): samples.jsonl was changed after the run wrote stops.json;"},
		{"no stops", samples, "", ""},
	} {
		files := map[string]string{StudyFile: "a: 1\n", EnvFile: "{}", SamplesFile: tc.samples, CPUFile: ""}
		if tc.stops != "" {
			files[StopsFile] = tc.stops
		}
		r, err := Load(writeRaw(t, files))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := strings.Join(r.Warnings, "\n")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}
