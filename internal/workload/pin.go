package workload

import (
	"errors"
	"fmt"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
)

// checkPinCPUs refuses a pin's CPU list naming CPUs its end may not run
// on, which taskset would refuse in every trial: the server end's, and
// the client end's where it runs on the same machine (both ends on the
// local engine; on a cluster, where the client is on the server node:
// intra-node, or inside the server pod with target hairpin, as pinEnds
// places it). Across nodes the client's
// machine is another one, not read. A list outside its end's node's CPUs
// (spec.nodes.*.cpus) is study validation's to refuse, at the pin.
func checkPinCPUs(w study.Workload, m Machine) error {
	if w.Pin == nil || m.Allowed == nil {
		return nil
	}
	for _, end := range []struct{ side, cpus string }{{"server", w.Pin.Server}, {"client", w.Pin.Client}} {
		if end.cpus == "" || topology.IsName(end.cpus) || (end.side == "client" && m.Remote && !w.ClientOnServerNode()) {
			continue
		}
		set, err := cpuset.Parse(end.cpus)
		if err != nil {
			return fmt.Errorf("pin.%s: %w", end.side, err)
		}
		if out := set.Outside(m.Allowed); len(out) > 0 {
			return fmt.Errorf("pin.%s %s: %s lets workloads run on CPUs %s only (%s), not on %s",
				end.side, end.cpus, m.where(), m.Allowed, m.AllowedWhy, out)
		}
	}
	return nil
}

// pinEnd is one end of a variant's pin: what the study asks of it and
// the node it runs on.
type pinEnd struct {
	side, pin string
	// node names the node the end runs on ("server", "client"); cpus are
	// that node's CPUs (spec.nodes.NODE.cpus), nil where it shares the
	// machine's.
	node string
	cpus cpuset.Set
}

// pinEnds are a variant's server and client ends. The client runs on the
// server node when placed there or inside the server pod (hairpin).
func pinEnds(w study.Workload, m Machine) (server, client pinEnd) {
	server = pinEnd{side: "server", pin: w.Pin.Server, node: "server", cpus: m.ServerCPUs}
	client = pinEnd{side: "client", pin: w.Pin.Client, node: "client", cpus: m.ClientCPUs}
	if w.ClientOnServerNode() {
		client.node, client.cpus = "server", m.ServerCPUs
	}
	return server, client
}

// resolve resolves name against ref among the CPUs the end may run on.
// A node with CPUs of its own starts its processes on them and taskset
// would move them anywhere it is told, so the name resolves among that
// node's CPUs: the topology is cut to them and to ref, which stays so
// that the name keeps its meaning relative to the other end. Every name
// leaves ref's own CPUs out (same-numa, same-core the CPUs of ref,
// other-core ref's cores, other-numa ref's nodes), so what is left is
// the node's.
func (e pinEnd) resolve(t topology.Topology, name string, ref cpuset.Set) (cpuset.Set, error) {
	if len(e.cpus) == 0 {
		return t.Resolve(name, ref)
	}
	set, err := t.Within(append(append(cpuset.Set{}, e.cpus...), ref...)).Resolve(name, ref)
	if !errors.Is(err, topology.ErrNotPossible) {
		return set, err
	}
	if _, whole := t.Resolve(name, ref); whole != nil {
		return nil, whole // not on the machine either: its reason
	}
	return nil, fmt.Errorf("%w: %s of CPU %d: none of %s is %s", topology.ErrNotPossible, name, ref[0], e.nodeCPUs(), relation(name, ref[0]))
}

// nodeCPUs names the end's node's CPUs and the field that set them.
func (e pinEnd) nodeCPUs() string {
	return fmt.Sprintf("the %s node's CPUs %s (spec.nodes.%s.cpus)", e.node, e.cpus, e.node)
}

// relation says what a CPU placed by name is to the reference CPU.
func relation(name string, ref int) string {
	switch name {
	case topology.SameNUMA:
		return fmt.Sprintf("on CPU %d's NUMA node", ref)
	case topology.OtherNUMA:
		return fmt.Sprintf("on another NUMA node than CPU %d's", ref)
	case topology.SameCore:
		return fmt.Sprintf("an SMT sibling of CPU %d", ref)
	}
	return fmt.Sprintf("on another core of CPU %d's NUMA node", ref)
}

// resolvePin resolves a variant's placement name; ok is false when its
// pin has no name (CPU lists run as given).
//
// The named end is placed against the other end: its CPU list when it
// has one; otherwise the first CPU of its node's CPU list, or the
// machine's lowest online CPU, and an other end left empty is pinned to
// that CPU, so "same-numa" holds while the trial runs (an other end
// given as none stays unpinned). The named end's CPUs are its node's.
func resolvePin(w study.Workload, m Machine) (r Resolved, note string, ok bool, err error) {
	if w.Pin == nil {
		return r, "", false, nil
	}
	named, other := pinEnds(w, m)
	if topology.IsName(other.pin) && !(topology.IsName(named.pin) && named.pin != topology.None) {
		named, other = other, named
	}
	if !topology.IsName(named.pin) {
		return r, "", false, nil
	}
	if m.Remote && !w.ClientOnServerNode() {
		// The name is placed against the other end's CPUs, which on a
		// cluster are another machine's when the ends are on two nodes
		// (a hairpin's client is inside the server pod, on its node).
		return r, "", false, fmt.Errorf("pin.%s %s: on a cluster a placement name resolves the server node's CPU topology, and across nodes the other end's CPUs are another machine's: place both on one node (placement: intra-node, or target: hairpin) or give CPU lists", named.side, named.pin)
	}
	if len(m.Topology.CPUs) == 0 {
		return r, "", false, fmt.Errorf("pin.%s %s: the CPU topology of %s is unknown", named.side, named.pin, m.where())
	}
	// Names resolve among the CPUs the workloads may run on.
	m.Topology = m.Topology.Within(m.Allowed)
	if len(m.Topology.CPUs) == 0 {
		return r, "", false, fmt.Errorf("pin.%s %s: none of the online CPUs of %s is among those workloads may run on (%s: %s)", named.side, named.pin, m.where(), m.AllowedWhy, m.Allowed)
	}
	ref, refWhy, pinOther, err := reference(other, m)
	if err != nil {
		return r, "", false, err
	}
	set, why, err := resolveName(m.Topology, m.where(), named, ref, w.Pin.Fallback == study.PinMark)
	if err != nil {
		return r, "", false, fmt.Errorf("pin.%s %s: %w", named.side, named.pin, err)
	}
	cpus := ""
	if set != nil {
		cpus = set.String()
	}
	r.Server, r.Client, r.NotComparable = cpus, pinOther, why
	if named.side == "client" {
		r.Server, r.Client = pinOther, cpus
	}
	return r, resolvedNote(named, other, cpus, refWhy, pinOther, why), true, nil
}

// reference is what the named end is placed against (see resolvePin),
// why, and the other end's pin as run.
func reference(other pinEnd, m Machine) (ref cpuset.Set, why, pin string, err error) {
	switch {
	case other.pin != "" && other.pin != topology.None:
		if ref, err = cpuset.Parse(other.pin); err != nil {
			return nil, "", "", fmt.Errorf("pin.%s: %w", other.side, err)
		}
		why = fmt.Sprintf("the %s's CPUs %s", other.side, ref)
	case len(other.cpus) > 0:
		ref, why = cpuset.Set{other.cpus[0]}, fmt.Sprintf("CPU %d, the first of the %s node's", other.cpus[0], other.node)
	default:
		ref, why = cpuset.Set{m.Topology.CPUs[0].ID}, fmt.Sprintf("CPU %d, the lowest of %s", m.Topology.CPUs[0].ID, m.where())
	}
	switch other.pin {
	case "":
		pin = ref.String()
	case topology.None:
		pin = ""
	default:
		pin = other.pin
	}
	return ref, why, pin, nil
}

// resolvedNote says what a name resolved to, for env.json.
func resolvedNote(named, other pinEnd, cpus, refWhy, pinOther, why string) string {
	note := fmt.Sprintf("pin.%s %s resolved to CPUs %s", named.side, named.pin, orUnpinned(cpus))
	if len(named.cpus) > 0 {
		note += " among " + named.nodeCPUs()
	}
	note += ", placed against " + refWhy
	if other.pin == "" {
		note += fmt.Sprintf("; the %s is pinned to %s", other.side, pinOther)
	}
	if why != "" {
		note += "; NOT COMPARABLE: " + why
	}
	return note
}

func orUnpinned(s string) string {
	if s == "" {
		return "(none: not pinned)"
	}
	return s
}

// resolveName resolves the named end's name against ref. A machine with
// one NUMA node cannot tell same-numa from other-numa, so both are
// refused there, as is any name the topology, or the end's node's CPUs,
// cannot honour (same-core without SMT); with mark, the nearest
// placement runs instead, among the node's CPUs, and why says so.
func resolveName(t topology.Topology, where string, named pinEnd, ref cpuset.Set, mark bool) (set cpuset.Set, why string, err error) {
	name := named.pin
	numa := name == topology.SameNUMA || name == topology.OtherNUMA
	if numa && t.Nodes() < 2 {
		err = fmt.Errorf("%w: %s has one NUMA node, so same-numa and other-numa cannot be told apart there", topology.ErrNotPossible, where)
	} else {
		set, err = named.resolve(t, name, ref)
	}
	if err == nil || !errors.Is(err, topology.ErrNotPossible) {
		return set, "", err
	}
	if !mark {
		return nil, "", fmt.Errorf("%w (pin.fallback: mark runs the nearest placement and marks the samples not comparable)", err)
	}
	why = err.Error()
	// The nearest: another core of ref's NUMA node (for same-numa the
	// node is the only one; for other-numa, same-core there is none).
	if set, err = named.resolve(t, topology.OtherCore, ref); err == nil {
		return set, why + "; ran " + topology.OtherCore + " instead: CPUs " + set.String(), nil
	}
	if len(named.cpus) > 0 {
		// The node confines the end to its CPUs: the scheduler's choice
		// among them is as near as any.
		return nil, why + "; ran unpinned instead, on " + named.nodeCPUs() + " (none of them is " + relation(topology.OtherCore, ref[0]) + ")", nil
	}
	// One core: nothing nearer than the scheduler's choice.
	return nil, why + "; ran unpinned instead (one core: nothing nearer than the scheduler's choice)", nil
}
