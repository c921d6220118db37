package runner

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/version"
)

// previousRun reads the interrupted run in the output directory for
// --resume and makes the checks that need no engine's preflight: it
// recorded its environment and samples, with this build and engine, on
// this machine when the local engine's nodes are it (sameMachine after
// preflight was too late), its study.yaml is as it wrote it and no
// trial is counted twice. Run makes them before preflight, whose probes
// load modules: a run refused here has changed nothing on the host. It
// changes nothing; it returns the run and its study's SHA-256.
func previousRun(opt Options, engine string) (*results.Run, string, error) {
	dir := opt.OutDir
	old, err := results.Load(dir)
	if err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", dir, err)
	}
	if results.Unrecorded(dir) {
		return nil, "", fmt.Errorf("--resume %s: the run ended before it recorded anything (no %s, empty %s), so there is nothing to continue: "+
			"remove its files and run the study again, without --resume", dir, results.EnvFile, results.SamplesFile)
	}
	if !old.HasEnv {
		return nil, "", fmt.Errorf("--resume %s: no %s: the run ended before it recorded its environment; start it again in a new directory", dir, results.EnvFile)
	}
	if err := sameBuild(old.Env, engine); err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", dir, err)
	}
	if engine == localEngine {
		if err := thisMachine(old.Env, opt.Study); err != nil {
			return nil, "", fmt.Errorf("--resume %s: %w", dir, err)
		}
	}
	sum, err := sameStudy(old)
	if err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, results.SamplesFile)); errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("--resume %s: no %s", dir, results.SamplesFile)
	}
	if err := countedOnce(old.Samples); err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", dir, err)
	}
	return old, sum, nil
}

// countedOnce refuses samples that count a trial twice, which no run
// writes: restore could not tell which one stands.
func countedOnce(samples []results.Sample) error {
	seen := map[trialKey]bool{}
	for _, s := range samples {
		k := trialKey{s.Cell, s.Trial}
		if seen[k] {
			return fmt.Errorf("%s trial %d is counted twice in %s", cellID(s.Cell), s.Trial, results.SamplesFile)
		}
		seen[k] = true
	}
	return nil
}

// loadPrevious takes over the interrupted run old (previousRun), once
// preflight has said whether the nodes are this machine: it must have
// been made on this machine (for the local engine previousRun said so
// already; a cluster's server node is checked once it is up, sameNode
// in writeEnv); its counted trials are kept (they are not run again, and the
// adaptive controller plans from them), its machine time counts against
// the budget, and its failed and repeated attempts stay recorded
// (restore). It changes nothing.
func (r *run) loadPrevious(old *results.Run) error {
	if note := unnamedBuild(old.Env.Version, version.Version); note != "" {
		r.notes = append(r.notes, note)
	}
	r.restore(old)
	r.samples = len(old.Samples)
	r.origin = old.Env.Origin
	// Its notes (its skips among them: env.json alone holds them) and
	// datapaths' facts stay on record (writeEnv).
	r.priorNotes, r.priorDatapaths = old.Env.Notes, old.Env.Datapaths
	if r.plan.remote {
		r.prevEnv = &old.Env // its node is checked once the cluster is up (sameNode)
	}
	r.runIDs = appendNew(old.Env.AllRunIDs(), r.id)
	kept := old.Env
	kept.RunIDs = slices.Clone(r.runIDs)
	r.keptEnv = &kept
	r.resumed = fmt.Sprintf("resumed: %d counted trials kept from run %s (started %s)",
		len(old.Samples), old.Env.RunID, old.Env.Started.Format("2006-01-02 15:04:05 MST"))
	r.notes = append(r.notes, r.resumed)
	// env.json stays the interrupted run's until this run's first
	// cluster describes the machine again (writeEnv replaces it). A
	// resumed run whose remaining rounds were all counted builds no
	// cluster, yet writing its stops rewrites env.json (writeStops): from
	// an empty env it recorded engine "", and a later --resume was
	// refused for it.
	r.env = kept
	r.env.Notes = appendNew(slices.Clone(old.Env.Notes), r.notes...)
	return nil
}

// recordPart writes a resumed run's part into env.json's run_ids before
// its engine makes anything. A kube run's Lease, pods and Services carry
// the run ID of the part that made them, which env.json took only once
// that part's first cluster was up (writeEnv): a resume killed in
// between (kill -9, a teardown that failed) left objects under an ID
// that the next resume did not look for, and it went on beside them.
// Otherwise env.json stays the interrupted run's until writeEnv.
func (r *run) recordPart() error {
	if r.keptEnv == nil {
		return nil
	}
	return r.out.WriteEnv(*r.keptEnv)
}

// metricOfCell is metricOf for a cell's workload variant.
func (r *run) metricOfCell(c results.Cell) string {
	for _, w := range r.study.Variants() {
		if w.Name == c.Workload {
			return r.metricOf(w)
		}
	}
	return results.MetricBitrate
}

// priorTrial is what the interrupted run recorded of one trial: its
// attempts, and the machine time the runner counted for them.
type priorTrial struct {
	// cost is every attempt's End − Start plus its pause: what the trial
	// added to its group's spent time (the knobs around each attempt are
	// not recorded, so a little less).
	cost time.Duration
	// wall is the counted attempt's cost, the cell's trial-time estimate
	// (0: none counted); overhead its time beyond the workload's duration.
	wall, overhead time.Duration
	// attempts is the highest attempt number; failures and repeats the
	// failed and the disturbed-and-repeated ones, which the retry and
	// repeat limits count on.
	attempts, failures, repeats int
	lastErr                     string
	// setUp is why the cell was given up at the trial's set-up, from its
	// results.SetUpFailed record ("" when it was not).
	setUp string
}

// restore takes an interrupted run's samples: counted trials are done,
// trials whose every attempt failed, or whose set-up did
// (results.SetUpFailed), are done too (the cell was given up there, and
// stays given up), and each trial's recorded machine time waits in r.prev until
// the resumed run reaches it (replay), so the budget is spent block by
// block as the interrupted run spent it. Stops of finished blocks are
// kept (resumeFinished).
func (r *run) restore(old *results.Run) {
	r.prev = map[trialKey]*priorTrial{}
	// What the tunings set stays on record though the resumed run may
	// run none of a tuning's trials (writeEnv starts from it).
	r.priorTunings, r.priorImpairments = old.Env.Tunings, old.Env.Impairments
	pause := r.pauseTime()
	at := func(s results.Sample) *priorTrial {
		k := trialKey{s.Cell, s.Trial}
		p := r.prev[k]
		if p == nil {
			p = &priorTrial{}
			r.prev[k] = p
		}
		p.cost += s.End.Sub(s.Start)
		if s.Discarded != results.SetUpFailed { // no attempt ran: no pause
			p.cost += pause
		}
		p.attempts = max(p.attempts, s.Attempt)
		return p
	}
	for _, s := range old.Samples {
		k := trialKey{s.Cell, s.Trial}
		r.done[k] = true // once each: previousRun refused a trial counted twice
		r.cellLog(s.Cell).record(s.Trial, valueOf(s, r.metricOfCell(s.Cell)), s.Part)
		p := at(s)
		p.wall, p.overhead = s.End.Sub(s.Start)+pause, s.End.Sub(s.Start)-r.study.Spec.Duration.Duration
		// rps-7 goes on avoiding the core the last baseline trial found.
		if t, ok := r.study.Tuning(s.Cell.Tuning); ok && t.IsBaseline() {
			r.noteSoftIRQCore(s)
		}
	}
	for _, s := range slices.Concat(old.Samples, old.Marked) {
		// This process is the run's next part: its trials pair with none
		// of the interrupted run's (rounds.go, planRound).
		r.part = max(r.part, s.Part+1)
	}
	for _, s := range old.Marked {
		p := at(s)
		switch {
		case s.Discarded == results.SetUpFailed:
			p.setUp = s.Error
		case s.Error != "":
			p.failures++
			p.lastErr = s.Error
		default:
			p.repeats++
		}
	}
	var attempts time.Duration
	for k, p := range r.prev {
		if !r.done[k] && (p.failures > study.MaxRetries || p.setUp != "") {
			r.done[k] = true // given up there: replay marks the cell failed
		}
		attempts += p.cost
	}
	// What the interrupted run spent besides its attempts (cluster
	// set-ups, knobs: samples do not record them), as far as the
	// machine time its last stops.json wrote tells, counts from the
	// start: the budget never counts less than that run had spent, and
	// env.json's machine_s never goes down on a resume.
	r.prior += max(seconds(old.Env.MachineS)-attempts, 0)
	r.oldStops = map[results.Cell]results.Stop{}
	for _, st := range old.Stops {
		r.oldStops[st.Cell] = st
	}
}

// replay accounts, once, the interrupted run's attempts at trial k as
// that run did when it ran them: their machine time as spent (returned
// for the group), the counted attempt as the cell's trial time, and a
// trial that failed every attempt, or whose set-up did, as the cell
// given up. 0 when the
// interrupted run did not reach k.
func (r *run) replay(k trialKey) time.Duration {
	p := r.prev[k]
	if p == nil {
		return 0
	}
	cost := p.cost
	r.prior += cost
	if !r.done[k] {
		// Attempts of a trial the interruption cut short: runUnit goes on
		// from them (attempt numbers, retry and repeat limits).
		p.cost = 0
		return cost
	}
	delete(r.prev, k)
	l := r.cellLog(k.cell)
	if p.wall > 0 {
		l.wall = append(l.wall, p.wall)
		r.overhead += p.overhead
		r.trialsRun++
	} else if p.setUp != "" {
		l.failed = p.setUp
		l.values[k.trial] = math.NaN()
	} else if p.failures > study.MaxRetries {
		l.failed = results.GaveUp(k.trial, p.failures, p.lastErr)
		l.values[k.trial] = math.NaN()
	}
	return cost
}

// resumeFinished takes, for a block the interrupted run finished (each
// of its cells has a stop in stops.json), that run's stops and machine
// time instead of planning it again: planning again could not see the
// time its cluster set-up took, so a cell it stopped on the budget could
// run again, and stopping is final. It reports whether it did.
func (r *run) resumeFinished(units []unit) bool {
	if len(r.oldStops) == 0 {
		return false
	}
	for _, u := range units {
		if _, ok := r.oldStops[u.cell]; !ok {
			return false
		}
	}
	in := map[results.Cell]bool{}
	for _, u := range units {
		in[u.cell] = true
		r.stops = append(r.stops, r.oldStops[u.cell])
	}
	var keys []trialKey
	for k := range r.prev {
		if in[k.cell] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].trial < keys[j].trial })
	for _, k := range keys {
		r.replay(k)
	}
	r.blocksDone++
	return true
}

// attemptsBefore is where runUnit starts trial k: after its disturbed
// attempt when runJobs runs it again, or after the interrupted run's
// attempts at it, counting their failures and repeats, so attempt
// numbers stay unique and the retry and repeat limits hold over both.
func (r *run) attemptsBefore(k trialKey) (failures, repeats, first int) {
	if a, ok := r.again[k]; ok { // run again at the end of its round
		delete(r.again, k)
		return a.failures, a.repeats, a.next
	}
	if p := r.prev[k]; p != nil {
		return p.failures, p.repeats, p.attempts + 1
	}
	return 0, 0, 1
}

// seconds is a time in seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// trialsLeft is how many trials a run may still run, each cell up to its
// maximum: of the cells still to run (toRun), the maximum less the
// trials the interrupted run counted.
func (r *run) trialsLeft() int {
	n := 0
	for _, u := range r.toRun() {
		n += r.cellTrialsLeft(u.cell)
	}
	return n
}

// toRun are the cells a run may still run a trial of, in the study's
// order, as cellsOf lists them (with their holds): not those the
// interrupted run of a resumed one stopped (its stop is kept), gave up
// or ran to their maximum, nor those this run has stopped (a block
// finished, or the budget spent before it) or given up (a trial that
// failed every attempt, a set-up lost). What is left (trialsLeft) and
// what the budget must still pay for (minimumShort, after the first
// round too) count these.
func (r *run) toRun() []unit {
	stopped := map[results.Cell]bool{}
	for _, st := range r.stops {
		stopped[st.Cell] = true
	}
	var out []unit
	for _, u := range r.units() {
		_, before := r.oldStops[u.cell]
		l := r.logs[u.cell]
		if before || stopped[u.cell] || l != nil && l.failed != "" || r.cellTrialsLeft(u.cell) == 0 {
			continue
		}
		out = append(out, u)
	}
	return out
}

// cellTrialsLeft is how many more trials cell c may run after the
// interrupted run's (before any is replayed): its maximum less those
// counted, none once it was given up.
func (r *run) cellTrialsLeft(c results.Cell) int {
	left := r.study.Spec.Trials.Max
	for t := 1; t <= r.study.Spec.Trials.Max; t++ {
		k := trialKey{c, t}
		if !r.done[k] {
			continue
		}
		if p := r.prev[k]; p != nil && p.wall == 0 {
			return 0 // done uncounted: given up there
		}
		left--
	}
	return max(left, 0)
}

// finishedBefore reports whether the interrupted run left a datapath
// nothing to measure: each of its blocks has its stops (resumeFinished
// takes them), or every cell of it has counted its maximum or was given
// up. Its cluster is then not built: building it applied knobs, waited
// for counters and replaced env.json (run ID, start, machine time) for
// no trial.
func (r *run) finishedBefore(dp string) bool {
	if !r.opt.Resume {
		return false
	}
	for _, reps := range r.study.Spec.Replicas {
		if !r.countFinishedBefore(dp, reps) {
			return false
		}
	}
	return true
}

// countFinishedBefore is finishedBefore for one replica count of a
// datapath: a count whose every cell was given up at its set-up is one,
// and its pods are not set up again to fail as they did (datapath
// replays it without them).
func (r *run) countFinishedBefore(dp string, reps int) bool {
	if !r.opt.Resume {
		return false
	}
	stopped, counted := true, true
	for _, u := range r.cellsOf(dp, reps) {
		_, ok := r.oldStops[u.cell]
		stopped = stopped && ok
		counted = counted && r.cellTrialsLeft(u.cell) == 0
	}
	return stopped || counted
}

// errNoCluster is a trial that a datapath replayed without its cluster
// would run: finishedBefore said none would.
var errNoCluster = errors.New("a trial to run in a datapath the interrupted run finished: its cluster was not built")

// replayDatapath runs the blocks of a datapath the interrupted run
// finished (finishedBefore) as datapath does, without a cluster: each
// takes its stops, or replays its counted trials and plans its last
// word again.
func (r *run) replayDatapath(dp string) error {
	for _, reps := range r.study.Spec.Replicas {
		if err := r.replayCount(dp, reps); err != nil {
			return err
		}
	}
	return nil
}

// replayCount runs the block of a replica count of datapath dp the
// interrupted run finished (countFinishedBefore) without its pods.
func (r *run) replayCount(dp string, reps int) error {
	units := r.cellsOf(dp, reps)
	if len(units) == 0 {
		return nil
	}
	return r.block(units, func(unit, int) (time.Duration, error) { return 0, errNoCluster })
}

// resumedUnbuilt puts on record what a resumed run that built no
// cluster adds to env.json, which only a cluster's writeEnv and the
// stops rewrite: its notes ("resumed", its start's warnings), and with
// the stops (writeStops) the machine time so far, no less than the
// interrupted run recorded.
func (r *run) resumedUnbuilt() error {
	if !r.opt.Resume || r.clusters > 0 {
		return nil
	}
	r.env.Notes = appendNew(r.env.Notes, r.notes...)
	if r.study.RecordsStops() && len(r.stops) > 0 {
		return r.writeStops()
	}
	return r.out.WriteEnv(r.env)
}
