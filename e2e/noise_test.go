package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDisturbedRunsAgainAfterTheRound: a trial the noise guard finds
// disturbed is recorded, marked, and run again after the round's other
// trials, before the next round; its repeat counts, marked, and the run's
// decisions and report say so. The guard is made to mark every attempt:
// no collector covers all of the planned window (minWindowPct 100), as a
// neighbour's steal would on a shared machine.
func TestDisturbedRunsAgainAfterTheRound(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	file := writeStudy(t, strings.Replace(fmt.Sprintf(tinyStudy, "bridge", "baseline, rps", "2s"), "trials: 1", "trials: 2", 1)+
		"  noise: {minWindowPct: 100}\n")
	r := cnibench(t, nil, "run", file, "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUntouched(t, before, "")
	b, err := os.ReadFile(filepath.Join(out, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct {
			Cell      struct{ Tuning string } `json:"cell"`
			Trial     int                     `json:"trial"`
			Attempt   int                     `json:"attempt"`
			Discarded string                  `json:"discarded"`
			Noise     struct{ Disturbed string }
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		if s.Noise.Disturbed == "" {
			t.Errorf("trial %d attempt %d of %s not marked disturbed", s.Trial, s.Attempt, s.Cell.Tuning)
		}
		mark := "counted"
		if s.Discarded != "" {
			mark = "repeated"
		}
		order = append(order, fmt.Sprintf("%s/%d/%d %s", s.Cell.Tuning, s.Trial, s.Attempt, mark))
	}
	want := []string{
		"baseline/1/1 repeated", "rps/1/1 repeated", "baseline/1/2 counted", "rps/1/2 counted",
		"baseline/2/1 repeated", "rps/2/1 repeated", "baseline/2/2 counted", "rps/2/2 counted",
	}
	if strings.Join(order, ", ") != strings.Join(want, ", ") {
		t.Errorf("attempts\n%s\nwant\n%s", strings.Join(order, ", "), strings.Join(want, ", "))
	}
	if !strings.Contains(r.stderr+r.stdout, "repeating it at the end of its round") ||
		!strings.Contains(r.stderr+r.stdout, "2 of its 2 trials and 2 of baseline's 2 counted though disturbed") {
		t.Errorf("the run does not say it repeats later, or that its decision rests on disturbed trials:\n%s\n%s", r.stdout, r.stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(n=2, disturbed)") || !strings.Contains(string(md), "## Marked trials") {
		t.Errorf("summary.md lacks the glance's mark or the marked trials")
	}
}

// TestOneCellRepeatWaitsForQuiet: in a round of one cell a disturbed
// trial has no other trials to run after, so the runner waits for a
// quiet second of the machine before repeating it. Here the test itself
// is the outside work, a busy loop beside the first attempt (outside CPU
// about half of this 2-core machine's, over the guard's 25%), stopped
// when the run says the attempt was disturbed: the wait ends at a quiet
// second and the repeat counts unmarked by outside CPU. Steal is not
// judged (maxStealPct 100), so a noisy neighbour cannot hold the wait.
func TestOneCellRepeatWaitsForQuiet(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	file := writeStudy(t, fmt.Sprintf(tinyStudy, "bridge", "baseline", "3s")+"  noise: {maxStealPct: 100, repeats: 1}\n")
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	stopBusy := func() { busy.Process.Kill(); busy.Wait() }
	t.Cleanup(func() {
		if busy.ProcessState == nil {
			stopBusy()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", file, "--out", out, "--journal-dir", jdir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(io.TeeReader(pipe, &stderr))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "note: ") {
			t.Log(sc.Text())
		}
		if strings.Contains(sc.Text(), "disturbed (") && busy.ProcessState == nil {
			stopBusy()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	assertUntouched(t, before, "")
	log := stderr.String()
	if busy.ProcessState == nil {
		t.Fatalf("the first attempt was not marked disturbed beside a busy loop:\n%s", log)
	}
	if !strings.Contains(log, "CPU of processes outside the run") || !strings.Contains(log, "machine quiet after") {
		t.Errorf("the run did not wait for a quiet machine before the repeat:\n%s", log)
	}
	b, err := os.ReadFile(filepath.Join(out, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var attempts []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct {
			Attempt   int    `json:"attempt"`
			Discarded string `json:"discarded"`
			Noise     struct{ Disturbed string }
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		attempts = append(attempts, fmt.Sprintf("%d %q %q", s.Attempt, s.Discarded, s.Noise.Disturbed))
	}
	if len(attempts) != 2 || !strings.Contains(attempts[0], "disturbed, repeated: CPU of processes outside the run") ||
		strings.Contains(attempts[1], "CPU of processes outside") || !strings.HasPrefix(attempts[1], `2 ""`) {
		t.Errorf("attempts %q, want the first repeated for outside CPU and the second counted without it", attempts)
	}
}
