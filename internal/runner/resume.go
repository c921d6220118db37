package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
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
// already; a cluster's nodes are checked once it is up); its counted trials are kept (they are not run again, and the
// adaptive controller plans from them), its machine time counts against
// the budget, and its failed and repeated attempts stay recorded
// (restore). It changes nothing.
func (r *run) loadPrevious(old *results.Run) error {
	dir := r.opt.OutDir
	if err := r.sameMachine(old.Env); err != nil {
		return fmt.Errorf("--resume %s: %w", dir, err)
	}
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
	r.resumed = fmt.Sprintf("resumed: %d counted trials kept from run %s (started %s)",
		len(old.Samples), old.Env.RunID, old.Env.Started.Format("2006-01-02 15:04:05 MST"))
	r.notes = append(r.notes, r.resumed)
	// env.json stays the interrupted run's until this run's first
	// cluster describes the machine again (writeEnv replaces it). A
	// resumed run whose remaining rounds were all counted builds no
	// cluster, yet writing its stops rewrites env.json (writeStops): from
	// an empty env it recorded engine "", and a later --resume was
	// refused for it.
	r.env = old.Env
	r.env.Notes = appendNew(slices.Clone(old.Env.Notes), r.notes...)
	return nil
}

// sameBuild refuses to resume a run made with another engine or
// cnibench build, whose trials would not compare.
func sameBuild(was results.Env, engine string) error {
	return firstDiffering(was, []check{
		{"engine", was.Engine, engine},
		{"cnibench version", was.Version, version.Version},
	})
}

// unnamedBuild is a note when the interrupted run's version and this
// one's, equal (sameBuild), do not name one build (version.Names): a
// "dev" or dirty build may hold other code under the same name, so the
// trials before and after the resume may not compare, and nothing here
// can tell. Refusing would stop every resume of a development build.
func unnamedBuild(was, is string) string {
	if version.Names(was) && version.Names(is) {
		return ""
	}
	return fmt.Sprintf("resumed with cnibench version %q as the run was made with, but that version does not name one build (built without its commit, or with uncommitted changes), so the trials before and after the resume may come from different code: build from a clean checkout (make build) for runs that resume", is)
}

// sameMachine refuses, on the local engine, to resume a run made on
// another machine (host, kernel, CPUs) or with other settings that move
// numbers (sharedSettings), whose trials would not compare.
// A remote engine's env.json describes the cluster's server node (its
// Describe), not this machine, which may be any machine that reaches the
// cluster: comparing it with this one refused every kube resume. The
// nodes are known once the cluster is up, so there the interrupted run's
// are put on record beside the resumed run's (a note in env.json), and
// checked then (sameNode).
func (r *run) sameMachine(was results.Env) error {
	if r.plan.remote {
		r.notes = append(r.notes, remoteResumeNote(was))
		return nil
	}
	return thisMachine(was, r.study)
}

// thisMachine refuses a run made on another machine than this one
// (host, kernel, CPUs), or with other settings that move numbers
// (sharedSettings), as machineEnv finds them for study s. previousRun
// asks it before preflight for the local engine, whose nodes are this
// machine.
func thisMachine(was results.Env, s *study.Study) error {
	now := machineEnv(false, s)
	return firstDiffering(was, append([]check{
		{"host", was.Hostname, now.Hostname},
		{"kernel", was.Kernel, now.Kernel},
		{"CPU model", was.CPUModel, now.CPUModel},
		{"CPU count", fmt.Sprint(was.CPUs), fmt.Sprint(now.CPUs)},
	}, sharedSettings("", was, now)...))
}

// sharedSettings are the settings beyond the machine's identity that a
// resumed run must share with the interrupted one, as compare lists
// them among what moves numbers (compare.Differences): how the CPUs
// idle (a round trip waits for a core to wake) and the versions of the
// tools that measure. Before, a resume checked neither and env.json took
// this run's values, so a mix of trials of an old and a new iperf3 was
// recorded as all of the new. Only what both runs recorded is held: a
// blank (a run before env.json kept cpuidle, a tool that printed no
// version) is unknown, and differs from nothing. "go" is left out: it
// is cnibench's own toolchain, which the version check stands for
// (sameBuild; an unnamed build is noted). node prefixes the CPU idle
// check's name ("server node " on a cluster).
func sharedSettings(node string, was, is results.Env) []check {
	var out []check
	if was.CPUIdle != nil && is.CPUIdle != nil {
		out = append(out, check{node + "CPU idle", was.CPUIdle.String(), is.CPUIdle.String()})
	}
	for _, name := range slices.Sorted(maps.Keys(was.Tools)) {
		if v := is.Tools[name]; name != "go" && was.Tools[name] != "" && v != "" {
			out = append(out, check{"tool " + name, was.Tools[name], v})
		}
	}
	return out
}

// check is one setting of the interrupted run (was) and of this one (is).
type check struct{ what, was, is string }

// firstDiffering is the refusal of the first check whose settings differ.
func firstDiffering(was results.Env, checks []check) error {
	for _, c := range checks {
		if c.was == c.is {
			continue
		}
		what := "its trials would not compare; start a new run"
		if c.what == "engine" {
			what = "resume it with the engine and flags it was started with (--engine " + was.Engine + ")"
		}
		return fmt.Errorf("the run was made with %s %q, this one would be %q: %s", c.what, c.was, c.is, what)
	}
	return nil
}

// remoteResumeNote records, in the resumed run's env.json, the server
// node the interrupted run measured on, which the resumed run's own
// Describe then overwrites: a reader compares the two.
func remoteResumeNote(was results.Env) string {
	cni := "unknown"
	if was.CNI != nil {
		cni = was.CNI.String()
	}
	return fmt.Sprintf("resumed a %s run whose server node was host %s, kernel %s, %s CPUs, CNI %s: checked against this run's "+
		"(above) once its cluster was up, before any trial (a node or CNI that differs is refused)",
		was.Engine, orUnknown(was.Hostname), orUnknown(was.Kernel), orUnknown(cpuCount(was.CPUs)), cni)
}

// cpuCount is a CPU count as sameNode compares it: "" when env.json has
// none (0: the node's agent could not say), which holds the other run
// to nothing.
func cpuCount(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// orUnknown is s, or "unknown" when env.json left it blank.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
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
}

// restore takes an interrupted run's samples: counted trials are done,
// trials whose every attempt failed are done too (the cell was given up
// there), and each trial's recorded machine time waits in r.prev until
// the resumed run reaches it (replay), so the budget is spent block by
// block as the interrupted run spent it. Stops of finished blocks are
// kept (resumeFinished).
func (r *run) restore(old *results.Run) {
	r.prev = map[trialKey]*priorTrial{}
	// What the tunings set stays on record though the resumed run may
	// run none of a tuning's trials (writeEnv starts from it).
	r.priorTunings = old.Env.Tunings
	pause := r.pauseTime()
	at := func(s results.Sample) *priorTrial {
		k := trialKey{s.Cell, s.Trial}
		p := r.prev[k]
		if p == nil {
			p = &priorTrial{}
			r.prev[k] = p
		}
		p.cost += s.End.Sub(s.Start) + pause
		p.attempts = max(p.attempts, s.Attempt)
		return p
	}
	for _, s := range old.Samples {
		k := trialKey{s.Cell, s.Trial}
		r.done[k] = true // once each: previousRun refused a trial counted twice
		r.cellLog(s.Cell).values[s.Trial] = valueOf(s, r.metricOfCell(s.Cell))
		p := at(s)
		p.wall, p.overhead = s.End.Sub(s.Start)+pause, s.End.Sub(s.Start)-r.study.Spec.Duration.Duration
		// rps-7 goes on avoiding the core the last baseline trial found.
		if t, ok := r.study.Tuning(s.Cell.Tuning); ok && t.IsBaseline() {
			r.noteSoftIRQCore(s)
		}
	}
	for _, s := range old.Marked {
		p := at(s)
		if s.Error != "" {
			p.failures++
			p.lastErr = s.Error
		} else {
			p.repeats++
		}
	}
	for k, p := range r.prev {
		if !r.done[k] && p.failures > study.MaxRetries {
			r.done[k] = true // given up there: replay marks the cell failed
		}
	}
	r.oldStops = map[results.Cell]results.Stop{}
	for _, st := range old.Stops {
		r.oldStops[st.Cell] = st
	}
}

// replay accounts, once, the interrupted run's attempts at trial k as
// that run did when it ran them: their machine time as spent (returned
// for the group), the counted attempt as the cell's trial time, and a
// trial that failed every attempt as the cell given up. 0 when the
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

// sameStudy refuses a study.yaml changed after the run wrote it (by
// hand: a longer duration), whose trials would not compare with the
// kept ones, and returns its sum. A run recorded before env.json kept
// the sum is not refused for it.
func sameStudy(old *results.Run) (string, error) {
	sum := studySum(old.Study)
	if was := old.Env.StudySHA256; was != "" && was != sum {
		return "", fmt.Errorf("%s was changed after the run wrote it (SHA-256 %s, now %s): the kept trials were measured with the "+
			"study as written, so they would not compare with new ones; put it back, or run the changed study in a new directory",
			results.StudyFile, was[:12], sum[:12])
	}
	return sum, nil
}

// studySum is the hex SHA-256 of a study file's bytes.
func studySum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ResumeRefusedError is a --resume refused once a cluster is up, before
// any trial: a node's or datapath's facts differ from the interrupted
// run's, and its trials would not compare with the kept ones. It is bad
// input like the resume refusals found before preflight (exit 2): the
// run changed nothing that stays (its cluster is torn down, env.json is
// the interrupted run's), and resuming again, which a failed run's
// message suggests, would be refused the same way.
type ResumeRefusedError struct{ Err error }

func (e *ResumeRefusedError) Error() string { return e.Err.Error() }
func (e *ResumeRefusedError) Unwrap() error { return e.Err }

// IsResumeRefused reports whether err holds a ResumeRefusedError.
func IsResumeRefused(err error) bool {
	var r *ResumeRefusedError
	return errors.As(err, &r)
}

// sameNode refuses to go on with a resumed cluster run (was: the
// interrupted run's env.json; nil for any other run) whose server node,
// as the engine now describes it (is), differs from the interrupted
// run's: another host, kernel, CPU count or CNI, or other settings that
// move numbers (the node's CPU idle, the image's tool versions:
// sharedSettings) would measure trials that do not compare with the kept
// ones. A remote engine's nodes are known only once the cluster is up,
// so this runs there, before any trial.
func sameNode(was *results.Env, is results.Env) error {
	if was == nil {
		return nil
	}
	cni := func(e results.Env) string {
		if e.CNI == nil {
			return "" // not detected: nothing to hold the other to
		}
		return e.CNI.String()
	}
	for _, c := range append([]check{
		{"server node host", was.Hostname, is.Hostname},
		{"server node kernel", was.Kernel, is.Kernel},
		{"server node CPU count", cpuCount(was.CPUs), cpuCount(is.CPUs)},
		{"CNI", cni(*was), cni(is)},
	}, sharedSettings("server node ", *was, is)...) {
		if c.was != "" && c.is != "" && c.was != c.is {
			return &ResumeRefusedError{fmt.Errorf("--resume: the interrupted run measured with %s %q, this cluster's is %q: its trials would not compare "+
				"with the kept ones; resume it on the cluster it ran on, or start a new run", c.what, c.was, c.is)}
		}
	}
	return nil
}

// sameBridgeNetfilter refuses to go on with a resumed run whose datapath
// name, just built, passes its bridged frames through iptables where the
// interrupted run's did not, or the other way round (is against prior,
// the interrupted run's datapaths' facts; nil for a run not resumed):
// the same datapath then costs another amount per packet (compare lists
// it), and br_netfilter, which anything on the machine may load or
// unload, decides it. It is known only once the datapath is built (its
// knobs, or preflight's probes, may load br_netfilter), so this runs
// there, before any of its trials. A blank value is unknown and holds
// the other to nothing.
func sameBridgeNetfilter(prior map[string]results.DatapathEnv, name, is string) error {
	was := prior[name].BridgeNFCallIPTables
	if was == "" || is == "" || was == is {
		return nil
	}
	return &ResumeRefusedError{fmt.Errorf("--resume: the interrupted run measured datapath %s with bridge-nf-call-iptables %q, this one's is %q "+
		"(br_netfilter loaded or unloaded since, or the sysctl set): its trials would not compare with the kept ones; "+
		"put it back as it was, or start a new run", name, was, is)}
}
