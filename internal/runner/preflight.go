package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/sysfs"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// PreflightError is a problem found before anything touched the host.
type PreflightError struct{ Err error }

func (e *PreflightError) Error() string { return e.Err.Error() }
func (e *PreflightError) Unwrap() error { return e.Err }

// IsPreflight reports whether err was found before the run changed anything.
func IsPreflight(err error) bool {
	var p *PreflightError
	return errors.As(err, &p)
}

type plan struct {
	// notes found in preflight go to env.json and the terminal; warnings
	// too, marked as such.
	notes, warnings []string
	drivers         map[string]workload.Driver
	// datapaths are the study's datapath entries, each built once.
	datapaths  map[string]engine.Datapath
	serverCPUs cpuset.Set
	clientCPUs cpuset.Set
	// machine are the CPUs of the server node (this machine's, or a
	// cluster node's); clientMachine the client node's when it is
	// another machine that says (engine.Facts.ClientCPUs).
	machine, clientMachine cpuset.Set
	// isolated are this machine's CPUs the kernel keeps RPS off
	// (isolcpus, nohz_full: hostcpus.Isolated); nil on a cluster.
	isolated cpuset.Set
	// workloads are the options resolved for this machine (workloadopts.go).
	workloads *workload.Prepared
	// remote is set when the nodes are other machines (a cluster);
	// sharedKernel when the two nodes run on one kernel (the local
	// engine's, or a kind-style cluster's: engine.Facts.SharedKernel).
	remote, sharedKernel bool
	// topo is the server node's CPU topology a cluster engine read (nil
	// on the local engine, or when no workload pins by name).
	topo *engine.NodeTopology
}

// Preflight checks privileges, kernel features, tools and CPU sets. It
// builds nothing; probing the kernel features may load their modules
// (probe.HostChanges). A problem of a study field is reported at the
// field's line, as a parse error is.
func preflight(ctx context.Context, e engine.Engine, s *study.Study) (*plan, error) {
	return resumePreflight(ctx, e, s, nil)
}

// resumePreflight is preflight for a --resume of the interrupted run
// prev (nil for a new run), whose leftovers the engine refuses to run
// beside (engine.Needs.Resumes: a kube run's pods, Services and Lease).
// Those of every part of it: a resumed part killed before its first
// cluster rewrote env.json left objects under its own run ID, which
// only run_ids holds (recordPart).
func resumePreflight(ctx context.Context, e engine.Engine, s *study.Study, prev *results.Run) (*plan, error) {
	var resumes []string
	if prev != nil {
		resumes = prev.Env.AllRunIDs()
	}
	p, err := checkPlan(ctx, e, s, resumes)
	if err != nil {
		return nil, &PreflightError{s.Locate(err)}
	}
	return p, nil
}

func checkPlan(ctx context.Context, e engine.Engine, s *study.Study, resumes []string) (*plan, error) {
	p := &plan{drivers: map[string]workload.Driver{}, machine: hostcpus.Machine()}
	needs, err := p.needs(s, e.Name() == localEngine)
	if err != nil {
		return nil, err
	}
	needs.Resumes = resumes
	// The study against this machine's CPUs and idle states is pure
	// input checking for an engine whose nodes are this machine: done
	// before the engine's preflight, whose probes load modules, so that
	// `nodes.server.cpus: 1000` is refused with the host untouched.
	if e.Name() == localEngine {
		if err := p.checkMachine(s, engine.Facts{}); err != nil {
			return nil, err
		}
		if err := p.checkRPSCPUs(s); err != nil {
			return nil, err
		}
		if err := impairPlaces(s, p.datapaths); err != nil {
			return nil, err
		}
	}
	facts, err := e.Preflight(ctx, s, needs)
	if err != nil {
		return nil, err
	}
	// The engine may have dropped datapaths (skipUnavailable, a
	// cluster's CNI): a spec.only that picked only theirs picks nothing
	// now, and the run stops here rather than measure nothing.
	if err := s.CheckOnlyLeft(); err != nil {
		return nil, err
	}
	p.notes, p.warnings, p.remote, p.sharedKernel, p.topo = facts.Notes, facts.Warnings, facts.Remote, facts.SharedKernel, facts.Topology
	if !facts.Remote { // a cluster's image carries the programs (kube engine's preflight)
		p.notes = append(p.notes, missingCollectorPrograms(s, probe.Found)...)
	}
	if err := p.checkMachine(s, facts); err != nil {
		return nil, err
	}
	if err := prepareWorkloads(s, p, facts); err != nil {
		return nil, err
	}
	p.notes = append(p.notes, knob.ImpairFlowNotes(s)...)
	p.notes = append(p.notes, p.isolatedNote(s)...)
	return p, p.checkRPSCPUs(s)
}

// localEngine is the name of the engine whose nodes are this machine.
const localEngine = "local"

// checkMachine checks the study's idle bounds and node CPU lists against
// the nodes' machine: the engine's facts, this machine's where they say
// nothing (MachineCPUs nil) or the nodes are this machine (not Remote).
func (p *plan) checkMachine(s *study.Study, facts engine.Facts) error {
	if !facts.Remote {
		facts.IdleStates = localIdleStates(sysfs.Dir("/sys"))
	}
	if err := checkIdleBounds(s, facts.IdleStates); err != nil {
		return err
	}
	// A node's CPU outside the machine's set either does not exist or is
	// one the cgroup's cpuset leaves out: said apart (the local engine's).
	online := p.machine
	if facts.MachineCPUs != nil {
		p.machine, online = facts.MachineCPUs, facts.MachineCPUs
	} else if o, err := hostcpus.Online(); err == nil {
		online = o
	}
	p.clientMachine = facts.ClientCPUs
	var err error
	if !facts.Remote {
		if p.isolated, err = hostcpus.Isolated("/sys"); err != nil {
			return fmt.Errorf("reading the isolated CPUs: %w", err)
		}
	}
	if p.serverCPUs, err = nodeCPUs("server", s.Spec.Nodes.Server.CPUs, p.machine, online); err != nil {
		return err
	}
	p.clientCPUs, err = nodeCPUs("client", s.Spec.Nodes.Client.CPUs, p.machine, online)
	return err
}

// needs looks up the workloads' drivers, builds each datapath entry once
// and gathers what the datapaths and knobs need, for the engine's
// preflight. local says the nodes are this machine (the local engine):
// the knobs' Wanted and Needs depend on it (the service path is the
// kube engine's own Services on a cluster; a tuning writes in a local
// node's namespace, a cluster node's agent in the host's), and the
// engine's facts, which say it too, come only after its preflight.
func (p *plan) needs(s *study.Study, local bool) (engine.Needs, error) {
	var n engine.Needs
	for _, w := range s.Variants() {
		d, err := registry.Lookup(w.Tool)
		if err != nil {
			return n, err
		}
		p.drivers[w.Name] = d
	}
	n.CheckTools = func() error {
		for i, base := range s.Spec.Workloads {
			for _, w := range base.Variants() {
				if err := p.drivers[w.Name].Check(); err != nil {
					return study.At(fmt.Sprintf("spec.workloads[%d].tool", i), fmt.Errorf("workload %s: %w", w.Name, err))
				}
			}
		}
		return nil
	}
	p.datapaths = map[string]engine.Datapath{}
	for i, sd := range s.Spec.Datapaths {
		field := fmt.Sprintf("spec.datapaths[%d]", i)
		d, err := catalog.Build(catalog.FromStudy(sd))
		if err != nil {
			return n, study.At(field, fmt.Errorf("datapath %s: %w", sd.Name, err))
		}
		t := &knob.Target{Study: s, Datapath: sd}
		f := append(d.Features(), knob.Needs(knob.Datapath, t)...)
		dp := engine.Datapath{Spec: sd, Built: d, Field: field, Features: append(f, knob.Needs(knob.Pods, t)...)}
		p.datapaths[sd.Name] = dp
		n.Datapaths = append(n.Datapaths, dp)
	}
	for i, t := range s.Spec.Tunings {
		f := knob.Needs(knob.Trial, &knob.Target{Study: s, Tuning: t, Local: local})
		n.Knobs = append(n.Knobs, engine.Need{What: "tuning " + t.Name, Field: fmt.Sprintf("spec.tunings[%d]", i), Features: f})
	}
	n.Knobs = append(n.Knobs, impairmentNeeds(s)...)
	for i, w := range s.Spec.Workloads {
		if f := knob.Needs(knob.Trial, &knob.Target{Study: s, Workload: w, Local: local}); len(f) > 0 {
			n.Knobs = append(n.Knobs, engine.Need{What: "workload " + w.Name + " (target " + w.Target + ")",
				Field: fmt.Sprintf("spec.workloads[%d].target", i), Features: f})
		}
	}
	return n, nil
}

// checkRPSCPUs checks that every CPU an RPS mask names is one of the
// node's it goes on: the server node's, the client node's for a tuning
// at the client end (and the server's too when a workload puts its
// clients on the server node).
func (p *plan) checkRPSCPUs(s *study.Study) error {
	intra := slices.ContainsFunc(s.Variants(), func(w study.Workload) bool { return w.Placement == study.PlacementIntraNode })
	for i, t := range s.Spec.Tunings {
		if t.RPS == nil {
			continue
		}
		sides := t.Sides()
		atClient := slices.Contains(sides, study.SideClient)
		var err error
		if slices.Contains(sides, study.SideServer) || (atClient && intra) {
			err = p.rpsFit(t.RPS.CPUs, "server", p.serverNodeCPUs())
		}
		if err == nil && atClient {
			err = p.rpsFit(t.RPS.CPUs, "client", p.clientNodeCPUs())
		}
		if err != nil {
			return study.At(fmt.Sprintf("spec.tunings[%d].rps.cpus", i), fmt.Errorf("tuning %s: %w", t.Name, err))
		}
	}
	return nil
}

// rpsCPUsFit checks an RPS CPU selector against the CPUs of the node at
// one end: a list names only its CPUs; all-but-softirq-core leaves one.
func rpsCPUsFit(sel, end string, cpus cpuset.Set) error {
	if sel == study.CPUsAllButSoftIRQ {
		if len(cpus) < 2 {
			return fmt.Errorf("rps cpus %s: the %s node has only CPU %s, none is left without it", sel, end, cpus)
		}
		return nil
	}
	set, _ := cpuset.Parse(sel)
	for _, c := range set {
		if !cpus.Contains(c) {
			return fmt.Errorf("rps cpus %s: CPU %d is not a CPU of the %s node (%s)", sel, c, end, cpus)
		}
	}
	return nil
}

// steerCPUs are the CPUs an RPS mask may name: the server node's CPUs
// (the paper's "all cores" of the server VM), or every CPU when shared,
// but for the isolated ones, which the kernel keeps RPS off.
func (p *plan) steerCPUs() cpuset.Set {
	return p.housekeeping(p.serverNodeCPUs())
}

// serverNodeCPUs are the server node's CPUs, or every CPU when shared.
func (p *plan) serverNodeCPUs() cpuset.Set {
	if len(p.serverCPUs) > 0 {
		return p.serverCPUs
	}
	return p.machine
}

// localMachine is the CPUs the local engine's nodes share (cnibench's
// cpuset: hostcpus.Machine), where an unpinned node's processes run; nil
// on a cluster, whose nodes' kernels say their own.
func (p *plan) localMachine() cpuset.Set {
	if p.remote {
		return nil
	}
	return p.machine
}

// clientSteerCPUs are the CPUs an RPS mask may name on the client node:
// clientNodeCPUs but for the isolated ones.
func (p *plan) clientSteerCPUs() cpuset.Set {
	return p.housekeeping(p.clientNodeCPUs())
}

// clientNodeCPUs are the client node's CPUs: its pinned CPUs, else the
// client node's (a cluster's), else every CPU.
func (p *plan) clientNodeCPUs() cpuset.Set {
	switch {
	case len(p.clientCPUs) > 0:
		return p.clientCPUs
	case len(p.clientMachine) > 0:
		return p.clientMachine
	}
	return p.machine
}

// nodeCPUs parses a node's cpus against the CPUs the run may use
// (machine) and the machine's online CPUs.
func nodeCPUs(node, list string, machine, online cpuset.Set) (cpuset.Set, error) {
	if list == "" {
		return nil, nil
	}
	field := "spec.nodes." + node + ".cpus"
	set, err := cpuset.Parse(list)
	if err != nil {
		return nil, study.At(field, err)
	}
	for _, c := range set {
		switch {
		case machine.Contains(c):
		case online.Contains(c):
			return nil, study.At(field, fmt.Errorf("CPU %d is outside the cpuset cnibench runs in (%s), which its nodes share", c, machine))
		default:
			return nil, study.At(field, fmt.Errorf("CPU %d does not exist (this machine has %s)", c, online))
		}
	}
	return set, nil
}
