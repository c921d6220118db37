package kube

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/cnitunnels"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/tune"
)

// preflightRun names the agent sessions preflight opens: they only read
// (probe in a scratch namespace), so they never journal anything.
const preflightRun = "preflight"

// nodeFacts are what preflight learnt from the nodes' agents.
type nodeFacts struct {
	// idle are CPU 0's idle states of each node, where a tuning bounds
	// idle (engine.Facts.IdleStates).
	idle []engine.NodeIdle
	// topo is the server node's CPU topology, read when a workload pins by
	// placement name (engine.Facts.Topology).
	topo *engine.NodeTopology
	// cni is the cluster's CNI, recognised from its DaemonSets and the
	// server node's CNI config and devices.
	cni cnidetect.Result
	// refused is the first need a node's kernel cannot meet, nil when
	// none; the run is refused once the datapath it names is picked.
	refused *refusal
	// online are each node's online CPUs, which its RPS masks span; a
	// node whose agent could not read them is not in the map.
	online map[string]cpuset.Set
}

// refusal is a need a node's kernel cannot meet: refused at preflight,
// after the datapath is picked, so that it names the datapath that would
// have run (the study's list is the runner's, made before the pick).
type refusal struct {
	need engine.Need
	node string
	err  error
}

// refuse is the refusal's error, naming datapaths, if the need names any,
// as those the run would have measured.
func (r *refusal) refuse(datapaths []string) error {
	n := r.need
	if len(n.Of) > 0 {
		n.Of = datapaths
	}
	return n.Refusal(": node "+r.node, r.err)
}

// preflightNodes asks the nodes' agents, before the run creates anything,
// what preflight needs of them, in one session per node:
//   - whether each node's kernel has what the study's knobs need (netem,
//     and ifb for ingress impairments; RPS and RFS; a tuning's sysctls).
//     The datapath's features are not asked: on a real cluster its CNI is
//     the datapath. A missing feature is a *probe.UnsupportedError naming
//     the node and what needed it, as the local engine's preflight names
//     it for this machine (nodeFacts.refused, the nodes after it not
//     asked). Where a tuning bounds idle (probe.CPUIdle) and
//     a node has idle states, CPU 0's, for the runner to check the bound
//     against on the node of each end the tuning goes on.
//   - when a workload pins, the CPUs the server node lets its pods run on
//     (the agent's own affinity: its pod's cpuset, the node's shared pool
//     the workload pods run in too), which the pins must keep to; with
//     byName, its CPU topology too, for the placement names a workload
//     pins by (seed 001 bound its receiver to the sender's NUMA node or
//     another one): on a cluster the names mean that node's CPUs, not this
//     machine's. The runner resolves them (workload.Prepare) and refuses
//     them across nodes, where the other end's CPUs are another machine's.
//   - the server node's CNI config files and devices, with the cluster's
//     DaemonSets, to recognise the CNI the cells measure.
//
// Both nodes' agents are asked, the client node's at least for its
// online CPUs (which its RPS masks span); with a Memo, each only for
// what it does not hold yet.
func preflightNodes(ctx context.Context, ex Execer, cs kubernetes.Interface, cfg Config, place Placement, needs []engine.Need, pins pinReads) (nodeFacts, error) {
	var f nodeFacts
	var want []string
	for _, n := range needs {
		for _, ft := range n.Features {
			if nodeProbed(ft) && !slices.Contains(want, ft) {
				want = append(want, ft)
			}
		}
	}
	srv, cli := place.Server.Name, place.Client.Name
	nodes := []string{srv}
	sides := map[string][]string{srv: {study.SideServer}}
	if cli != srv {
		nodes = append(nodes, cli)
	}
	sides[cli] = append(sides[cli], study.SideClient)
	c := &Cluster{cfg: cfg, cs: cs, poll: 500 * time.Millisecond}
	agents, err := c.waitAgents(ctx, nodes...)
	if err != nil {
		return f, err
	}
	var cniIn cnidetect.Input
	for _, node := range nodes {
		p, cni := pins, true
		if node != srv {
			p, cni = pinReads{}, false
		}
		r, err := cfg.Memo.reads(node, want, p, cni, func(want []string, pins pinReads, cni bool) (nodeReads, error) {
			var r nodeReads
			err := withAgent(ctx, ex, cfg.AgentNamespace, agents[node], preflightRun, func(a *agent.Client) error {
				return r.read(a, want, pins, cni)
			})
			return r, err
		})
		if err != nil && r.what == "" { // the session, before any read
			return f, fmt.Errorf("node %s: %w", node, err)
		}
		if err != nil {
			return f, fmt.Errorf("node %s: %s through its agent: %w", node, r.what, err)
		}
		if node == srv {
			cniIn = r.cni
		}
		if r.online != nil {
			if f.online == nil {
				f.online = map[string]cpuset.Set{}
			}
			f.online[node] = r.online
		}
		if f.refused = missingNeed(needs, node, r.missing); f.refused != nil {
			break
		}
		if r.idle != nil {
			f.idle = append(f.idle, engine.NodeIdle{Where: "node " + node + "'s", Sides: sides[node], States: r.idle})
		}
		if node == srv && (pins.allowed || r.topo != nil) {
			f.topo = &engine.NodeTopology{Where: "node " + node, Allowed: r.allowed,
				AllowedWhy: "the cpuset its pods run in, as the cnibench agent's cgroup there shows"}
			if r.topo != nil {
				f.topo.Topology = *r.topo
			}
		}
	}
	cniIn.DaemonSets = daemonSets(ctx, cs)
	cniClues(ctx, cs, place, &cniIn)
	f.cni = cnidetect.Detect(cniIn)
	return f, nil
}

// missingNeed is the first of needs whose kernel features node lacks, as
// a refusal naming every one of them it lacks, or nil: as probe.Require
// on the local engine, a refusal naming only netem of an ingress
// impairment's netem and ifb would refuse again once netem was loaded.
func missingNeed(needs []engine.Need, node string, missing map[string]string) *refusal {
	for _, n := range needs {
		var errs []error
		for _, ft := range n.Features {
			if why, ok := missing[ft]; ok && nodeProbed(ft) {
				errs = append(errs, &probe.UnsupportedError{Name: ft, Kind: probe.KindKernel, Reason: why})
			}
		}
		if err := probe.Missing(errs); err != nil {
			return &refusal{need: n, node: node, err: err}
		}
	}
	return nil
}

// pinReads says what preflight reads of the server node for the study's
// pins: the CPUs its pods may run on when a workload pins at all, and the
// CPU topology when one pins by placement name.
type pinReads struct{ allowed, topology bool }

// pinsOf is what s's pins need read.
func pinsOf(s *study.Study) pinReads {
	return pinReads{allowed: s.Pins(), topology: s.PinsByName()}
}

// nodeReads are one node's answers in a preflight session.
type nodeReads struct {
	what    string // what was being read, for an error
	missing map[string]string
	idle    []cpuidle.State
	allowed cpuset.Set
	topo    *topology.Topology
	cni     cnidetect.Input
	online  cpuset.Set
}

// read asks a: the node's online CPUs, the kernel features in want (and
// CPU 0's idle states when want has probe.CPUIdle), what pins needs, the
// CNI config and devices with cni.
func (r *nodeReads) read(a *agent.Client, want []string, pins pinReads, cni bool) error {
	// Not read is not fatal: the node's capacity stands in (cpusOf).
	r.online, _ = topology.Online(tune.HostSysfs(a))
	if len(want) > 0 {
		r.what = fmt.Sprintf("probe %v", want)
		var err error
		if r.missing, err = a.Features(want...); err != nil {
			return err
		}
		if _, lacks := r.missing[probe.CPUIdle]; !lacks && slices.Contains(want, probe.CPUIdle) {
			// Not read is not fatal: the trial's plan reads them again
			// and refuses a bound that changes nothing there.
			r.idle, _ = cpuidle.States(tune.HostSysfs(a), 0)
		}
	}
	if pins.allowed {
		r.what = "read the CPUs its pods may run on (for the workloads' pins)"
		info, err := a.Info()
		if err != nil {
			return err
		}
		if info.AllowedCPUs != "" { // an older agent's: unknown, not checked
			if r.allowed, err = cpuset.Parse(info.AllowedCPUs); err != nil {
				return fmt.Errorf("allowed CPUs %q: %w", info.AllowedCPUs, err)
			}
		}
	}
	if pins.topology {
		r.what = "read its CPU topology (for the placement names the workloads pin by)"
		t, err := topology.ReadFrom(tune.HostSysfs(a))
		if err != nil {
			return err
		}
		r.topo = &t
	}
	if cni {
		// Clues, not requirements: detection says what it saw, and an
		// unreadable config directory leaves it fewer clues.
		r.cni.ConfFiles, _ = a.CNIConf()
		r.cni.Links, _ = a.Links("")
		sort.Strings(r.cni.Links)
		r.cni.Down = downLinks(a, r.cni.Links, cnitunnels.Fallbacks()...)
	}
	return nil
}

// downLinks are those of names, among the node's links, whose flags
// (sysfs, hexadecimal) lack IFF_UP; a device whose flags cannot be read
// counts as up, the state detection assumed before it read any.
func downLinks(fs tune.FS, links []string, names ...string) []string {
	var down []string
	for _, n := range names {
		if !slices.Contains(links, n) {
			continue
		}
		v, err := fs.Read("", tune.FSSysfs, "class/net/"+n+"/flags")
		if err != nil {
			continue
		}
		if f, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "0x"), 16, 32); err == nil && f&unix.IFF_UP == 0 {
			down = append(down, n)
		}
	}
	return down
}

// daemonSets are the cluster's DaemonSets that CNI detection weighs
// (cnidetect.DaemonSetNames), the agent's left out, in namespace and
// name order, as one list of all would give them; none of a name RBAC
// does not let the runner list. Each name is a list of every namespace
// with the field selector metadata.name=NAME: the API server authorizes
// that as a list of the one name (k8s.io/apiserver
// pkg/endpoints/request/requestinfo.go sets the request's name from
// the selector), so the ClusterRole grants list on these names alone,
// not every DaemonSet's pod template (ClusterRole).
func daemonSets(ctx context.Context, cs kubernetes.Interface) []cnidetect.DaemonSet {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var items []appsv1.DaemonSet
	for _, name := range cnidetect.DaemonSetNames() {
		list, err := cs.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{FieldSelector: nameSelector(name)})
		if err != nil {
			continue // a clue fewer
		}
		for _, d := range list.Items {
			// Checked as well as selected: client-go's fake clientset
			// ignores field selectors and would hand back every one.
			if d.Name == name {
				items = append(items, d)
			}
		}
	}
	slices.SortFunc(items, func(a, b appsv1.DaemonSet) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var out []cnidetect.DaemonSet
	for _, d := range items {
		if d.Labels[LabelManagedBy] == ManagedBy {
			continue
		}
		ds := cnidetect.DaemonSet{Namespace: d.Namespace, Name: d.Name}
		for _, c := range d.Spec.Template.Spec.Containers {
			ds.Images = append(ds.Images, c.Image)
			for _, e := range c.Env {
				// Literal values only: one from a ConfigMap or field is
				// not in the DaemonSet, and reading it needs more rights.
				if e.Value != "" && slices.Contains(cnidetect.PoolEnv, e.Name) {
					if ds.Env == nil {
						ds.Env = map[string]string{}
					}
					ds.Env[e.Name] = e.Value
				}
			}
		}
		out = append(out, ds)
	}
	return out
}

// nodeProbed says whether preflight probes feature f on the nodes: the
// kernel features. RPS and RFS included: the agent's probe reads the
// host-global RFS table through the init network namespace, as its knob
// writes it, so it finds it on nodes that are namespaces of one machine
// (the test cluster) too; and a tuning's sysctls (probe.Sysctl), looked
// for in the same namespace.
func nodeProbed(f string) bool {
	return probe.IsKernel(f)
}
