package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trial's CPU points are on disk before the sample that counts it: a
// kill between the two writes (here, a sample write that fails) leaves
// points of an uncounted trial, which resume can remove, not a counted
// trial without points, which nothing can measure again.
func TestAppendTrialWritesPointsFirst(t *testing.T) {
	w, dir := newRun(t)
	w.samples.Close() // the sample's write fails, as a kill before it would stop it
	pts := []CPUPoint{{Cell: cellOf("a"), Trial: 1, CPU: 0}, {Cell: cellOf("a"), Trial: 1, CPU: 1}}
	if err := w.AppendTrial(Sample{Cell: cellOf("a"), Trial: 1, Metrics: map[string]float64{"bitrate": 1}}, pts); err == nil {
		t.Fatal("AppendTrial with samples.jsonl closed: no error")
	}
	b, err := os.ReadFile(filepath.Join(dir, CPUFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("cpu.jsonl has %d lines after the sample's write failed, want the trial's 2 points:\n%s", n, b)
	}
}

// Reopen (--resume) removes the points of trials samples.jsonl does not
// count (killed between the writes, or only marked), which the resumed
// run measures again under the same number; the counted trials' lines
// stay byte for byte, and a file without such points is not rewritten.
func TestReopenDropsUncountedCPU(t *testing.T) {
	point := func(tuning string, trial, cpu int) string {
		return fmt.Sprintf(`{"cell":{"datapath":"bridge","tuning":%q,"workload":"tcp","replicas":1},"trial":%d,"time":"2026-01-02T03:04:05Z","cpu":%d,"idle":50}`+"\n", tuning, trial, cpu)
	}
	sample := func(tuning string, trial int, discarded string) string {
		return fmt.Sprintf(`{"cell":{"datapath":"bridge","tuning":%q,"workload":"tcp","replicas":1},"trial":%d,"metrics":{"bitrate":1},"discarded":%q}`+"\n", tuning, trial, discarded)
	}
	counted := point("a", 1, 0) + point("a", 1, 1) + point("b", 1, 0)
	dir := writeRaw(t, map[string]string{
		StudyFile:   "apiVersion: x\n",
		SamplesFile: sample("a", 1, "") + sample("b", 1, "") + sample("a", 2, "disturbed, repeated: steal"),
		// a/2 was marked, a/3 never counted (the kill), b/2's sample
		// line was cut by the kill.
		CPUFile: point("a", 1, 0) + point("a", 2, 0) + point("a", 1, 1) + point("a", 3, 0) + point("b", 1, 0) + point("b", 2, 0),
	})
	f, _ := os.OpenFile(filepath.Join(dir, SamplesFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"cell":{"datapath":"bridge","tuning":"b","workload":"tcp","replicas":1},"trial":2,"met`)
	f.Close()
	w, err := Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, err := os.ReadFile(filepath.Join(dir, CPUFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != counted {
		t.Errorf("cpu.jsonl after Reopen:\n%s\nwant the counted trials' lines:\n%s", b, counted)
	}
	st, _ := os.Stat(filepath.Join(dir, CPUFile))
	w, err = Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if again, _ := os.Stat(filepath.Join(dir, CPUFile)); !os.SameFile(st, again) {
		t.Error("Reopen rewrote a cpu.jsonl with no uncounted trial's points")
	}
}
