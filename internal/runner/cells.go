package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// engineRun is what the engine knows of this run.
func (r *run) engineRun() engine.Run {
	return engine.Run{
		ID: r.id, Study: r.study, Journal: r.journal, StateDir: journal.StateDir(r.jdir, r.id),
		ServerCPUs: r.plan.serverCPUs, ClientCPUs: r.plan.clientCPUs, Log: r.opt.Log,
	}
}

// tearDown closes c, naming the datapath in its error. It is joined to
// whatever already failed, never dropped: a run that failed or was
// stopped is when a teardown is likeliest to fail too (the API server
// unreachable, pods stuck), and the user must hear that objects remain.
// errors.Join keeps the first error first, and with it the exit code.
func tearDown(name string, c engine.Cluster) error {
	if err := c.Close(); err != nil {
		return fmt.Errorf("tear down %s: %w", name, err)
	}
	return nil
}

// upDatapath builds the cluster of one datapath entry, applies its
// knobs, runs work on it and tears it down. The run's first cluster also
// writes env.json. A set-up that failed every attempt (retrySetUp) runs
// lost instead, which gives up the cells work was to measure; the run
// goes on. With lost nil (a study of one datapath) such a failure ends
// the run instead: it has nothing else to measure (retrySetUp).
func (r *run) upDatapath(ctx context.Context, d study.Datapath, work func(engine.Cluster, *knob.Target) error, lost func(setUpLost) error) error {
	var (
		c       engine.Cluster
		tgt     *knob.Target
		applied *knob.Applied
	)
	failed, err := r.retrySetUp(ctx, "datapath "+d.Name, lost != nil, func() (err error) {
		c, tgt, applied, err = r.setUpDatapath(ctx, d)
		return err
	})
	if err != nil {
		return err
	}
	if failed != nil {
		return lost(*failed)
	}
	err = work(c, tgt)
	err = errors.Join(err, applied.Revert(), tearDown(d.Name, c))
	if err != nil {
		return err
	}
	// Pods are deleted when scaling down and by Close, after the trials,
	// so their teardown latency is a fact of the datapath (env.json), not
	// of a trial's sample; a datapath built once per round adds each
	// cluster's pods.
	if pt, ok := c.(engine.PodTimer); ok {
		if r.podTimes == nil {
			r.podTimes = map[string][]engine.PodTime{}
		}
		r.podTimes[d.Name] = append(r.podTimes[d.Name], pt.PodTimes()...)
		de := r.env.Datapaths[d.Name]
		de.PodNetwork = podNetworkTimes(r.podTimes[d.Name])
		return r.recordDatapath(d.Name, de)
	}
	return nil
}

// setUpDatapath builds the cluster of one datapath entry and applies its
// knobs. A cluster that could not be built, or knobs that could not be
// applied (and were reverted, the cluster torn down), are a setUpError;
// anything else that fails ends the run (setUpError says what).
func (r *run) setUpDatapath(ctx context.Context, d study.Datapath) (engine.Cluster, *knob.Target, *knob.Applied, error) {
	c, de, err := r.engine.Up(ctx, r.engineRun(), r.plan.datapaths[d.Name])
	if err != nil {
		return nil, nil, nil, setUpFailed(fmt.Errorf("build cluster for %s: %w", d.Name, err))
	}
	if err := checkImpairPlace(r.study, d, c); err != nil {
		return nil, nil, nil, errors.Join(err, tearDown(d.Name, c))
	}
	r.clusters++
	if r.clusters == 1 {
		if err := r.writeEnv(c); err != nil {
			return nil, nil, nil, errors.Join(err, tearDown(d.Name, c))
		}
	}
	tgt := &knob.Target{
		Study: r.study, Cluster: c, Datapath: d, Env: &de, Journal: r.journal,
		FS: r.engine.FS, Kernel: r.engine.Kernel, State: map[string]any{}, Local: !r.plan.remote,
	}
	applied, err := knob.Apply(ctx, knob.Datapath, tgt)
	if err != nil {
		// As a trial's knobs: one that failed was undone by Apply, unless
		// a RevertError says it was not.
		err = fmt.Errorf("datapath %s: %w", d.Name, err)
		terr := tearDown(d.Name, c)
		if terr != nil || errors.As(err, new(*knob.RevertError)) {
			return nil, nil, nil, errors.Join(err, terr)
		}
		return nil, nil, nil, setUpFailed(err)
	}
	de.BridgeNFCallIPTables = bridgeNetfilter(r.engine.FS(c.Server()), c.Server().Netns())
	err = sameBridgeNetfilter(r.priorDatapaths, d.Name, de.BridgeNFCallIPTables)
	if err == nil {
		err = r.recordDatapath(d.Name, de)
	}
	if err != nil {
		err = fmt.Errorf("datapath %s: %w", d.Name, errors.Join(err, applied.Revert()))
		return nil, nil, nil, errors.Join(err, r.putBackEnv(err), tearDown(d.Name, c))
	}
	return c, tgt, applied, nil
}

// datapath runs every cell of one datapath: per replica count the pods
// are scaled once and the pod knobs applied, then trial k of every
// variant and tuning runs before trial k+1 of any. A replica count
// spec.only selects no cell of is not scaled to, nor one the interrupted
// run of a resumed one finished (its cells stopped, run to their
// maximum or given up, at their set-up too: replayed without pods); one
// whose set-up is lost has its cells given up (lostTo), and the next
// count goes on.
func (r *run) datapath(ctx context.Context, c engine.Cluster, tgt *knob.Target) error {
	for _, reps := range r.study.Spec.Replicas {
		units := r.cellsOf(tgt.Datapath.Name, reps)
		if len(units) == 0 {
			continue
		}
		if r.countFinishedBefore(tgt.Datapath.Name, reps) {
			if err := r.replayCount(tgt.Datapath.Name, reps); err != nil {
				return err
			}
			continue
		}
		work := func() error { return r.trials(ctx, c, reps, tgt) }
		lost := func(l setUpLost) error { return r.block(units, r.lostTo(l)) }
		if err := r.atReplicas(ctx, c, reps, tgt, work, lost); err != nil {
			return err
		}
	}
	return nil
}

// atReplicas scales the cluster's pods for a replica count, applies the
// pod knobs, runs work and reverts them; a set-up that failed every
// attempt (retrySetUp) runs lost instead. A failed attempt's pod knobs
// are reverted (Apply does it), and its pods deleted (dropPods) before
// the next attempt and after the last: Scale keeps the pods it has and
// only adds or deletes the difference, so a pod the failed attempt left
// broken (a kube pod in a terminal state, which fails Scale at once)
// would fail the retry the same way, and every larger replica count
// after it.
func (r *run) atReplicas(ctx context.Context, c engine.Cluster, reps int, tgt *knob.Target, work func() error, lost func(setUpLost) error) error {
	dp := tgt.Datapath.Name
	var applied *knob.Applied
	attempt := 0
	failed, err := r.retrySetUp(ctx, fmt.Sprintf("%s at %d replicas", dp, reps), true, func() (err error) {
		if attempt++; attempt > 1 {
			if err := dropPods(ctx, c, dp); err != nil {
				return err
			}
		}
		applied, err = r.setUpReplicas(ctx, c, reps, tgt)
		return err
	})
	if err != nil {
		return err
	}
	if failed != nil {
		if err := dropPods(ctx, c, dp); err != nil {
			return err
		}
		return lost(*failed)
	}
	err = work()
	if rerr := applied.Revert(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("%s: %w", dp, rerr))
	}
	return err
}

// dropPods deletes every pod of the cluster after a replica count's
// failed set-up, so that the next attempt, or the next count, starts
// from pods made afresh. Its failure ends the run (it is no setUpError):
// what could not be deleted is left beside the next pods.
func dropPods(ctx context.Context, c engine.Cluster, dp string) error {
	if _, _, err := c.Scale(ctx, 0); err != nil {
		return fmt.Errorf("%s: delete the pods of a failed set-up: %w", dp, err)
	}
	return nil
}

// setUpReplicas scales the cluster's pods for a replica count, applies
// the pod knobs and lets the counters settle. Pods that could not be
// made, or pod knobs that could not be applied (and were reverted), are
// a setUpError; anything else that fails ends the run.
func (r *run) setUpReplicas(ctx context.Context, c engine.Cluster, reps int, tgt *knob.Target) (*knob.Applied, error) {
	dp := tgt.Datapath.Name
	need := reps
	for _, u := range r.cellsOf(dp, reps) {
		// The variants this datapath runs here: with spec.only, a
		// background load of 99 pairs no picked cell has is not built.
		need = max(need, u.work.PodsPerNode(reps))
	}
	servers, clients, err := c.Scale(ctx, need)
	if err != nil {
		return nil, setUpFailed(fmt.Errorf("%s: scale to %d pod pairs: %w", dp, need, err))
	}
	if err := r.recordImages(c); err != nil {
		return nil, fmt.Errorf("%s: %w", dp, err)
	}
	tgt.Servers, tgt.Clients = servers, clients
	applied, err := knob.Apply(ctx, knob.Pods, tgt)
	if err != nil {
		err = fmt.Errorf("%s: %w", dp, err)
		if errors.As(err, new(*knob.RevertError)) {
			return nil, err
		}
		return nil, setUpFailed(err)
	}
	err = r.recordDatapath(dp, *tgt.Env)
	if err == nil {
		err = r.settleCounters(ctx, dp, reps, servers, clients)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dp, errors.Join(err, applied.Revert()))
	}
	return applied, nil
}

// countersSettle is how long interfaces that just came up go on sending
// multicast membership reports: the kernel sends IGMPv3's unsolicited
// report robustness (2) times, each after a random delay under the
// unsolicited report interval (1 s) (net/ipv4/igmp.c, igmp_ifc_event and
// igmp_ifc_timer_expire; RFC 3376 section 8.11), and MLDv2 likewise. The
// reports of new pods and bridges cross their node's netfilter
// (Kube-router's masquerade rule, unlike Flannel's, does not leave out
// 224.0.0.0/4), so a rule-counting window opened before they are out
// adds their rules to the measured flow's path: a first trial right
// after set-up counted Kube-router's inter-host path as 13 chains / 21
// rules, the trials after it 10 / 14.
const countersSettle = 3 * time.Second

// settleCounters, when a workload variant counts netfilter rules, greets
// the pairs the counting variants will measure (engine.Greeter) and waits
// countersSettle after the pods of a replica count are made. The greeting
// resolves each pair's neighbours before the first window: Weave's first
// intra-host trial counted the first contact's ARP broadcast, flooded
// over its VXLAN to the other node (12 chains / 21 rules against 10 / 14
// in the trials after it).
func (r *run) settleCounters(ctx context.Context, dp string, reps int, servers, clients []engine.Pod) error {
	counting := false
	seen := map[string]bool{}
	for _, u := range r.cellsOf(dp, reps) {
		w := u.work
		if !w.Counters || seen[w.Name] {
			continue
		}
		seen[w.Name] = true
		counting = true
		pl, err := place(w, reps, servers, clients)
		if err != nil {
			continue // the variant's own trials report it
		}
		for _, p := range append(pl.pairs, pl.background...) {
			r.greet(p.Client, p.Server)
			r.greet(p.Server, p.Client)
		}
	}
	if !counting {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(countersSettle):
		return nil
	}
}

// greet sends from's greeting to to when the engine's pods can; a
// greeting that cannot be sent is a note, not an error: the trial then
// finds out whether the pair can talk, and says so.
func (r *run) greet(from, to engine.Pod) {
	g, ok := from.(engine.Greeter)
	if !ok {
		return
	}
	if err := g.Greet(to.IP()); err != nil {
		r.opt.Progress.Logf("note: %v (the first trial may count the first contact's neighbour resolution)", err)
	}
}

// unit is one cell of a datapath at a replica count, with what its
// trials need: the axes of the study (workload variant, tuning; more axes
// are one more loop in cellsAt) and the pods the variant is placed on.
type unit struct {
	cell   results.Cell
	tuning study.Tuning
	work   study.Workload
	pl     placed
	// hold holds a cell whose trials may take a few distinct values
	// before a decision (hold.go); cellsOf sets it, before any pods.
	hold adaptive.Hold
}

// cellsAt lists the cells of one datapath at one replica count, in the
// order a round runs them, placed on the target's pods.
func (r *run) cellsAt(reps int, tgt *knob.Target) ([]unit, error) {
	out := r.cellsOf(tgt.Datapath.Name, reps)
	byWork := map[string]placed{}
	for i, u := range out {
		pl, ok := byWork[u.work.Name]
		if !ok {
			var err error
			if pl, err = place(u.work, reps, tgt.Servers, tgt.Clients); err != nil {
				return nil, err
			}
			byWork[u.work.Name] = pl
		}
		out[i].pl = pl
	}
	return out, nil
}

// cellsOf lists the cells of one datapath at one replica count, in the
// order a round runs them, not yet placed on pods but with their holds:
// those the study selects (all but where spec.only leaves some out).
func (r *run) cellsOf(dp string, reps int) []unit {
	var out []unit
	for _, w := range r.study.Variants() {
		for _, t := range r.study.Spec.Tunings {
			for _, m := range r.study.ImpairmentCells() {
				cell := results.Cell{Datapath: dp, Tuning: t.Name, Workload: w.Name, Replicas: reps, Impairment: m}
				if !r.study.Selected(cell) {
					continue
				}
				u := unit{cell: cell, tuning: t, work: w}
				u.hold = r.holdOf(u)
				out = append(out, u)
			}
		}
	}
	return out
}

// units are every cell of the run, in the study's order (study.Cells),
// as cellsOf lists them.
func (r *run) units() []unit {
	var out []unit
	for _, d := range r.study.Spec.Datapaths {
		for _, reps := range r.study.Spec.Replicas {
			out = append(out, r.cellsOf(d.Name, reps)...)
		}
	}
	return out
}
