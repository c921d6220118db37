package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/version"
)

// failUp's Up fails, counting its calls: a resume with nothing to
// measure must build no cluster.
type failUp struct {
	stubEngine
	ups *int
}

func (e failUp) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	*e.ups++
	return nil, results.DatapathEnv{}, errors.New("Up called")
}

// A resumed run of one datapath that the interrupted run had finished
// (killed after its last stops, or after its last trial before them)
// builds no cluster, says there is no trial left, and keeps env.json's
// run ID, start and machine time, adding its notes. Before, it built the cluster, applied
// its knobs, said "running up to N trials" (the trials the adaptive
// design never ran) and rewrote env.json from a new run's: another run
// ID and start, machine_s dropped.
func TestResumeFinishedBuildsNoCluster(t *testing.T) {
	for _, tc := range []struct {
		name      string
		set       []string
		dropStops bool
	}{
		{"adaptive, stopped early", nil, false},
		{"fixed, killed before its stops", []string{"trials=3"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := roundsStudy(t, tc.set...)
			dir := t.TempDir()
			var log bytes.Buffer
			cut := newRoundsRun(t, s, dir, &log)
			started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			cut.env = results.Env{Tool: "cnibench", Engine: "stub", Version: version.Version, RunID: "r1", Started: started}
			if err := cut.out.WriteEnv(cut.env); err != nil {
				t.Fatal(err)
			}
			if err := runBlocks(cut, &fakeTrials{r: cut}); err != nil {
				t.Fatal(err)
			}
			cut.out.Close()
			if tc.dropStops {
				if err := os.Remove(filepath.Join(dir, results.StopsFile)); err != nil {
					t.Fatal(err)
				}
			}
			old, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if old.Env.MachineS <= 0 || tc.dropStops == (len(old.Samples) < len(s.Cells())*s.Spec.Trials.Max) {
				t.Fatalf("machine_s %g, %d samples of %d cells: want it recorded and cells stopped early only in the adaptive case (the test's point)",
					old.Env.MachineS, len(old.Samples), len(s.Cells()))
			}
			w, err := results.Reopen(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			log.Reset()
			ups := 0
			res := &run{study: s, design: newDesign(s), done: map[trialKey]bool{}, began: time.Now(), out: w, engine: failUp{ups: &ups},
				opt:  Options{Progress: progress.New(&log), Resume: true, OutDir: dir},
				plan: &plan{machine: cpuset.Range(4), notes: []string{"this run's preflight note"}}}
			if err := res.loadPrevious(old); err != nil {
				t.Fatal(err)
			}
			if err := res.execute(context.Background()); err != nil || ups != 0 {
				t.Fatalf("resume: %v, %d clusters built; want none built", err, ups)
			}
			if strings.Contains(log.String(), "running up to") {
				t.Errorf("log %q: no trial is left to run", log.String())
			}
			got, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			e := got.Env
			if e.RunID != "r1" || !e.Started.Equal(started) || e.Engine != "stub" || e.MachineS < old.Env.MachineS {
				t.Errorf("env.json: run %q started %s, engine %q, machine_s %g; want r1's, from %s, stub, at least %g",
					e.RunID, e.Started, e.Engine, e.MachineS, started, old.Env.MachineS)
			}
			if !slices.Contains(e.Notes, res.resumed) || !slices.Contains(e.Notes, "this run's preflight note") {
				t.Errorf("env.json's notes %q: want the resume and this run's notes said", e.Notes)
			}
			if len(got.Stops) != len(s.Cells()) || len(got.Samples) != len(old.Samples) {
				t.Errorf("%d stops, %d samples after the resume; want %d, %d", len(got.Stops), len(got.Samples), len(s.Cells()), len(old.Samples))
			}
		})
	}
}

// A resumed run says how many trials it may still run: none of a cell
// the interrupted run stopped or gave up, the maximum less the counted
// trials of the others.
func TestTrialsLeft(t *testing.T) {
	s := roundsStudy(t)
	cells := s.Cells()
	r := &run{study: s, done: map[trialKey]bool{}, prev: map[trialKey]*priorTrial{}, oldStops: map[results.Cell]results.Stop{}, plan: &plan{}}
	max := s.Spec.Trials.Max
	if got := r.trialsLeft(); got != len(cells)*max {
		t.Fatalf("new run: %d left, want %d", got, len(cells)*max)
	}
	r.oldStops[cells[0]] = results.Stop{Cell: cells[0]} // stopped after 2 trials
	r.done[trialKey{cells[0], 1}], r.done[trialKey{cells[0], 2}] = true, true
	r.done[trialKey{cells[1], 1}] = true // counted
	r.prev[trialKey{cells[1], 1}] = &priorTrial{wall: time.Second}
	r.done[trialKey{cells[2], 1}] = true // given up
	r.prev[trialKey{cells[2], 1}] = &priorTrial{failures: 3}
	if got, want := r.trialsLeft(), (len(cells)-2)*max-1; got != want {
		t.Errorf("resumed: %d left, want %d", got, want)
	}
}

// A resumed run's first cluster rewrites env.json (writeEnv) with the
// machine time the interrupted run recorded, until its stops count it
// again: it dropped it, and a resume killed before its first stops left
// env.json without it.
func TestWriteEnvKeepsMachineTime(t *testing.T) {
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &run{engine: envEngine{}, plan: &plan{remote: true}, out: w, study: stubStudy(t, "[{tool: iperf3}]"),
		done: map[trialKey]bool{}, opt: Options{Progress: progress.New(&bytes.Buffer{})}}
	if err := r.loadPrevious(&results.Run{Env: results.Env{Engine: "stub", RunID: "r1", MachineS: 420}}); err != nil {
		t.Fatal(err)
	}
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(w.Dir(), results.EnvFile))
	if err != nil {
		t.Fatal(err)
	}
	var got results.Env
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.MachineS != 420 {
		t.Errorf("env.json's machine_s %g after the resumed run's first cluster, want the interrupted run's 420", got.MachineS)
	}
}

// The interrupted run's machine time counts no less than the machine_s
// it recorded: its samples give each attempt's time and pause, not its
// cluster set-ups and knobs, which the budget had counted.
func TestRestoreCountsRecordedMachineTime(t *testing.T) {
	s := roundsStudy(t)
	c := s.Cells()[0]
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	smp := results.Sample{Cell: c, Trial: 1, Attempt: 1, Start: t0, End: t0.Add(10 * time.Second), Metrics: map[string]float64{results.MetricBitrate: 1}}
	for _, tc := range []struct {
		machineS float64
		want     time.Duration
	}{
		{600, 600 * time.Second}, // set-ups beyond the trial
		{5, 0},                   // a trial after the last stops: its own time, replayed
		{0, 0},                   // not recorded
	} {
		r := &run{study: s, design: newDesign(s), done: map[trialKey]bool{}, plan: &plan{}}
		r.restore(&results.Run{Env: results.Env{MachineS: tc.machineS}, Samples: []results.Sample{smp}})
		attempt := 10*time.Second + r.pauseTime()
		want := max(tc.want-attempt, 0)
		if r.prior != want {
			t.Errorf("machine_s %g: %s counted before any replay, want %s", tc.machineS, r.prior, want)
		}
		r.replay(trialKey{c, 1})
		if got := r.prior; got < seconds(tc.machineS) || got < attempt {
			t.Errorf("machine_s %g: %s counted after the replay, want at least it and the attempt's %s", tc.machineS, got, attempt)
		}
	}
}

// The round a kill cut (the baseline's trial 4 counted before it, the
// tuning's after --resume) is no pair for the controller: the resumed
// run measures as the run's next part, and the looks' paired statistic
// leaves that round out; the rounds before and after pair as before.
func TestResumeCutRoundIsNoPair(t *testing.T) {
	s := roundsStudy(t)
	units := blockUnits(s, s.Spec.Replicas[0])
	base, tuned := units[0], units[1]
	if base.cell.Tuning != s.Spec.Baseline {
		t.Fatalf("first unit %s is not the baseline", cellID(base.cell))
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	g := r.groupsOf(units)[0]
	sample := func(c results.Cell, trial int, v float64) results.Sample {
		start := t0.Add(time.Duration(trial) * time.Minute)
		return results.Sample{Cell: c, Trial: trial, Attempt: 1, Start: start, End: start.Add(5 * time.Second), Metrics: map[string]float64{g.metric: v}}
	}
	var old results.Run
	for k := 1; k <= 3; k++ {
		old.Samples = append(old.Samples, sample(base.cell, k, 100+float64(k)), sample(tuned.cell, k, 110+float64(k)))
	}
	old.Samples = append(old.Samples, sample(base.cell, 4, 104)) // killed before the tuning's trial 4
	r.restore(&old)
	if r.part != 1 {
		t.Fatalf("resumed run's part %d, want 1", r.part)
	}
	// This process measures the tuning's trial 4, then round 5.
	r.cellLog(tuned.cell).record(4, 114, r.part)
	r.cellLog(base.cell).record(5, 105, r.part)
	r.cellLog(tuned.cell).record(5, 115, r.part)
	p, err := r.planRound(g, 6, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range p.Cells {
		if cp.ID != cellID(tuned.cell) {
			continue
		}
		if cp.Comparison == nil || cp.Comparison.Paired.N != 4 || cp.Sequential == nil || cp.Sequential.Paired.N != 4 {
			t.Fatalf("%s: %+v; want 4 pairs (rounds 1-3 and 5) in its comparison and its look at 5", cp.ID, cp)
		}
		return
	}
	t.Fatalf("no plan for %s", cellID(tuned.cell))
}
