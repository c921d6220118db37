// Package knob holds the knobs: settings a study changes on the nodes
// for a datapath, a pod count or a trial, each applied in one place and
// reverted exactly there.
//
// Each knob is one entry of List, saying what it changes and for how
// long (its Scope). The runner calls Apply once per scope boundary; Apply
// applies, in list order, every knob the cell asks for, and the returned
// Applied reverts them in reverse order. A knob that changes something a
// crashed run would leave behind (a host sysctl, a qdisc on a device
// that outlives the run) journals it before it writes (Target.Journal),
// so `cnibench cleanup` can undo it; what lives inside the run's node
// namespaces is undone by deleting them.
//
// A new knob (netem impairments of a node's devices, per trial) is one
// file with its Entry and one line in List; the runner does not change.
package knob

import (
	"context"
	"errors"
	"net"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// Scope is how long a knob stays applied.
type Scope string

const (
	// Build knobs are applied by the engine while it builds the nodes and
	// undone with them; they have no Apply here.
	Build Scope = "build"
	// Datapath knobs are applied once the datapath's cluster is up and
	// stay until it is torn down.
	Datapath Scope = "datapath"
	// Pods knobs are (re)applied whenever the datapath's pods change
	// (once per replica count), as a CNI reprograms endpoints.
	Pods Scope = "pods"
	// Trial knobs are applied before each trial and reverted after it.
	Trial Scope = "trial"
)

// Scopes are the scopes in the order a run passes through them.
var Scopes = []Scope{Build, Datapath, Pods, Trial}

// Target is what knobs act on; the runner fills the fields of the scope
// it applies (and of the enclosing ones).
type Target struct {
	Study    *study.Study
	Cluster  engine.Cluster
	Datapath study.Datapath
	// Env is the datapath's env.json record: knobs note what they did.
	Env *results.DatapathEnv
	// Journal records changes that outlive a crashed run.
	Journal *journal.Journal
	// FS reads and writes a node's sysfs/procfs (engine.Engine.FS).
	FS func(engine.Node) tune.FS
	// Kernel is a node's kernel handle (engine.Engine.Kernel): where it
	// is an engine.Impairer, netem goes on through it.
	Kernel func(engine.Node) engine.Kernel
	// State keeps, by knob name, what a knob remembers between the calls
	// of one datapath (the runner makes it per datapath).
	State map[string]any

	// Servers and Clients are the pods that exist now (Pods, Trial).
	Servers, Clients []engine.Pod

	// The trial's cell (Trial).
	Tuning   study.Tuning
	Workload study.Workload
	// Measured are the trial's measured server pods; MeasuredClients
	// their clients.
	Measured        []engine.Pod
	MeasuredClients []engine.Pod
	// Impairment is the cell's network impairment (knob impair.go);
	// Impaired are the devices its netem went on (set by the knob, read
	// by the qdisc collector).
	Impairment study.Impairment
	Impaired   engine.Impaired
	// Local is set on the local engine (emulated nodes the run owns).
	Local bool
	// Front are the addresses clients reach the measured servers at
	// instead of their pod IPs (set by knob service-path: ClusterIPs).
	Front []net.IP
	// SteerCPUs are the CPUs an RPS mask may name; SoftIRQCore is the
	// core rps-7 steers away from.
	SteerCPUs   cpuset.Set
	SoftIRQCore int
	// ClientSteerCPUs are the CPUs an RPS mask may name on the client
	// node (a tuning with side: client or both); ClientSoftIRQCore is
	// the core rps-7 steers away from there, -1 when not known (the
	// highest CPU then).
	ClientSteerCPUs   cpuset.Set
	ClientSoftIRQCore int
	// Tuned is what the cell's tuning set (set by the tuning knob, kept
	// by the runner in env.json for the report).
	Tuned []results.TuningSetting
}

// Undo reverts what an Apply did; nil when nothing needs reverting (the
// change goes with the node namespaces).
type Undo func() error

// Entry describes a knob.
type Entry struct {
	// Name identifies the knob in errors and docs.
	Name string
	// Changes says what the knob changes, where.
	Changes string
	Scope   Scope
	// Wanted says whether the target asks for the knob.
	Wanted func(t *Target) bool
	// Needs are the kernel features and tools (probe names) the knob
	// needs on the nodes when wanted, checked in preflight.
	Needs func(t *Target) []string
	// Apply applies the knob (nil for Build knobs).
	Apply func(ctx context.Context, t *Target) (Undo, error)
	// HashCPUs, for a knob that places each flow's receive work on a
	// CPU the flow's hash picks (RPS), is how many CPUs it picks among
	// at t: 0 where it places no flows so, and nil for a knob that never
	// does. t is the cell and the steering CPUs only, no cluster and no
	// pods: the runner plans with it before they exist. A trial's flows are new connections, with new ports and so
	// new hashes: with few flows per CPU, where they land changes from
	// trial to trial, and with it the cell's value, which then takes a
	// few distinct values rather than normal noise. The runner holds
	// such cells before a decision (runner/hold.go, adaptive.Hold).
	HashCPUs func(t *Target) int
}

// HashSpread is the most CPUs a knob of scope s wanted by t places
// flows on by hash (Entry.HashCPUs), and that knob's name; 0 and ""
// when none does.
func HashSpread(s Scope, t *Target) (cpus int, knob string) {
	for _, e := range List {
		if e.Scope != s || e.HashCPUs == nil || !e.Wanted(t) {
			continue
		}
		if n := e.HashCPUs(t); n > cpus {
			cpus, knob = n, e.Name
		}
	}
	return cpus, knob
}

// List is every knob, in the order they are applied (and reverted in
// reverse).
var List = []Entry{
	linkRateEntry,
	offloadsEntry,
	podOffloadsEntry,
	policyEntry,
	netfilterEntry,
	tuningEntry,
	impairEntry,
	servicePathEntry,
}

// Needs lists what the knobs of scope s wanted by t need.
func Needs(s Scope, t *Target) []string {
	var out []string
	for _, e := range List {
		if e.Scope == s && e.Wanted(t) {
			out = append(out, e.Needs(t)...)
		}
	}
	return out
}

// Applied is the knobs of one scope in effect.
type Applied struct {
	names []string
	undo  []Undo
}

// RevertError is a failure to undo a knob: the host is no longer in the
// state the next trial assumes, so a run that meets one must stop (the
// runner's fatal error) rather than measure on top of it.
type RevertError struct{ Err error }

func (e *RevertError) Error() string { return "revert: " + e.Err.Error() }
func (e *RevertError) Unwrap() error { return e.Err }

// failedApply is the error of a knob whose Apply failed part-way after
// undoing what it had done: err, and when the undo fails too a
// *RevertError holding both (the host keeps a change the next trial does
// not assume, and the runner stops the run on it, as Apply promises).
func failedApply(err error, undo func() error) error {
	if uerr := undo(); uerr != nil {
		return &RevertError{errors.Join(err, uerr)}
	}
	return err
}

// Apply applies, in list order, the knobs of scope s that t wants. If
// one fails, those already applied are reverted and the error says which
// failed; if reverting fails too, the error holds a *RevertError.
func Apply(ctx context.Context, s Scope, t *Target) (*Applied, error) {
	a := &Applied{}
	for _, e := range List {
		if e.Scope != s || e.Apply == nil || !e.Wanted(t) {
			continue
		}
		u, err := e.Apply(ctx, t)
		if err != nil {
			// A knob that failed half-way hands back the undo of what it
			// did write.
			var undo error
			if u != nil {
				if uerr := u(); uerr != nil {
					undo = &RevertError{uerr}
				}
			}
			return nil, errors.Join(err, undo, a.Revert())
		}
		a.names = append(a.names, e.Name)
		a.undo = append(a.undo, u)
	}
	return a, nil
}

// Revert reverts the applied knobs in reverse order, each once; it goes
// on past a failure and returns every error (each Undo's error says what
// it reverted) as one *RevertError, nil when all went back.
func (a *Applied) Revert() error {
	if a == nil {
		return nil
	}
	var errs []error
	for i := len(a.undo) - 1; i >= 0; i-- {
		if u := a.undo[i]; u != nil {
			if err := u(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	a.undo, a.names = nil, nil
	if len(errs) == 0 {
		return nil
	}
	return &RevertError{errors.Join(errs...)}
}
