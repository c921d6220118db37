package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// Engine runs studies on a real cluster (engine.Engine); its node handle
// is the node agent (package agent).
type Engine struct {
	cfg   Config
	rc    *rest.Config
	cs    kubernetes.Interface
	place Placement
	// cni is the cluster's CNI as preflight recognised it, and
	// labelStandsFor what the study's datapath label stands for when that
	// is another CNI (checkLabel).
	cni            cnidetect.Result
	labelStandsFor string
	// cpus are the server's and the client's node's CPUs (cpusOf).
	cpus map[string]cpuset.Set
	c    *Cluster
	// used: Up brought the run's cluster up. A failed Up deleted what it
	// made (or says what it left, engine.ErrLeftBehind), so the runner
	// may try it again.
	used bool
}

// NewEngine returns the kube engine; cfg nil means the defaults.
func NewEngine(cfg *Config) *Engine {
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	return &Engine{cfg: c.WithDefaults()}
}

// Name implements engine.Engine.
func (*Engine) Name() string { return "kube" }

// Preflight checks the study against what a real cluster can do, then the
// cluster itself (kube.Preflight; no other run's Lease fresh, and no
// object of a run whose runner is gone left, for a --resume any of the
// interrupted run's parts' among them: checkNoLiveRun, checkLeftBehind), then, through the nodes' agents, their
// online CPUs (which RPS masks span), the kernel features the knobs need
// (netem for impairments), the CPUs the
// server node's pods may run on when a workload pins (and its CPU
// topology when one pins by placement name), and the cluster's CNI, which
// picks the study's datapath when it lists several (pickDatapath) and
// against which the datapath label is checked (checkLabel). The
// workloads' programs are checked in the image by the agents, perf by
// the nodes.
func (b *Engine) Preflight(ctx context.Context, s *study.Study, needs engine.Needs) (engine.Facts, error) {
	f := engine.Facts{Remote: true}
	if err := checkStudy(s); err != nil {
		return f, err
	}
	if err := b.cfg.Validate(); err != nil {
		return f, err
	}
	b.cfg.Tools = kubeTools(s)
	if b.cs == nil {
		rc, cs, err := b.cfg.Memo.Connect(b.cfg.Kubeconfig, b.cfg.Context)
		if err != nil {
			return f, err
		}
		b.rc, b.cs = rc, cs
	}
	place, err := b.cfg.Memo.Preflight(ctx, b.cs, b.cfg)
	if err != nil {
		return f, err
	}
	b.place = place
	f.Notes = append(f.Notes, place.Notes...)
	if err := checkNoLiveRun(ctx, b.cs, b.cfg.Namespace, time.Now()); err != nil {
		return f, err
	}
	if err := checkLeftBehind(ctx, b.cs, b.cfg, needs.Resumes, time.Now()); err != nil {
		return f, err
	}
	if shared, note := sharedKernel(place); shared {
		f.SharedKernel, f.Notes = true, append(f.Notes, note)
	}
	if err := kubeUnsupported(s); err != nil {
		return f, err
	}
	nf, err := preflightNodes(ctx, &APIExecer{Config: b.rc, Client: b.cs}, b.cs, b.cfg, place, needs.Knobs, pinsOf(s))
	if err != nil {
		return f, err
	}
	f.IdleStates, f.Topology, b.cni = nf.idle, nf.topo, nf.cni
	picked, err := pickDatapath(s, b.cni)
	if err != nil {
		return f, err
	}
	if picked != "" {
		f.Notes = append(f.Notes, picked)
	}
	if nf.refused != nil {
		return f, nf.refused.refuse(s.DatapathNames())
	}
	f.Notes = append(f.Notes, leaveOutEmulation(s)...)
	if w, standsFor := checkLabel(s, b.cni); w != "" {
		f.Warnings, b.labelStandsFor = append(f.Warnings, w), standsFor
	}
	f.Warnings = append(f.Warnings, routedWarnings(b.cni)...)
	if err := refuseTunnelPlace(s, b.cni); err != nil {
		return f, err
	}
	// Masks are computed from each end's node's CPUs, not this machine's.
	b.cpus = map[string]cpuset.Set{
		place.Server.Name: cpusOf(nf.online[place.Server.Name], place.Server),
		place.Client.Name: cpusOf(nf.online[place.Client.Name], place.Client),
	}
	f.MachineCPUs, f.ClientCPUs = b.cpus[place.Server.Name], b.cpus[place.Client.Name]
	return f, nil
}

// cpusOf is a node's CPUs: the online ones its agent read, else
// 0..capacity-1 (nil when neither is known, and RPS masks fall back to
// this machine's).
func cpusOf(online cpuset.Set, n *corev1.Node) cpuset.Set {
	if len(online) > 0 {
		return online
	}
	if c := NodeCPUs(n); c > 0 {
		return cpuset.Range(c)
	}
	return nil
}

// checkStudy refuses what only the local engine's emulated nodes can do,
// before the cluster is asked anything. How many datapaths the study
// lists is settled once the cluster's CNI is known (pickDatapath).
func checkStudy(s *study.Study) error {
	if s.Spec.Nodes.Server.CPUs != "" || s.Spec.Nodes.Client.CPUs != "" {
		return study.At("spec.nodes", errors.New("a node's cpus pin an emulated node to CPUs; on a real cluster nodes have their own CPUs: remove them for --engine kube"))
	}
	return nil
}

// leaveOutEmulation leaves out, with a note, what of the (one) datapath's
// entry only shapes the local engine's emulated nodes: on a cluster the
// datapath is a label (the cluster's CNI is measured), so the same study
// file runs on both engines and its cells line up in compare. The run's
// study.yaml then says what ran.
func leaveOutEmulation(s *study.Study) []string {
	d := &s.Spec.Datapaths[0]
	var unused []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"mtu", d.MTU != 0}, {"offloads", len(d.Offloads) > 0}, {"podOffloads", len(d.PodOffloads) > 0},
		{"policy", d.Policy != ""}, {"netfilter", d.Netfilter != nil}, {"wiring", d.Wiring != ""},
		{"implementation", d.Implementation != ""}, {"spec.link", s.Spec.Link.Rate != ""},
	} {
		if f.set {
			unused = append(unused, f.name)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	d.MTU, d.Offloads, d.PodOffloads, d.Policy, d.Netfilter, d.Wiring, d.Implementation = 0, nil, nil, "", nil, "", ""
	s.Spec.Link = study.Link{}
	return []string{fmt.Sprintf("datapath %s: %s shape the local engine's emulated nodes and are not applied on a cluster, whose CNI and NICs decide them; the cells keep the name %s",
		d.Name, strings.Join(unused, ", "), d.Name)}
}

// Up prepares the run's pods on the cluster. There is nothing to build:
// preflight refused the local engine's knobs, and the cluster's CNI is
// the datapath.
func (b *Engine) Up(ctx context.Context, r engine.Run, d engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	de := results.DatapathEnv{Type: "cluster CNI (labelled " + d.Spec.Name + ")"}
	if b.used {
		return nil, de, errors.New("the kube engine runs one datapath per run (the cluster's CNI)")
	}
	cfg := b.cfg
	cfg.RunID = r.ID
	if cfg.Controller == "" {
		cfg.Controller = ControllerID()
	}
	c, err := Up(ctx, b.cs, &APIExecer{Config: b.rc, Client: b.cs}, cfg, b.place, r.Log)
	if err != nil {
		return nil, de, err
	}
	b.used = true
	c.routedPath(b.cni)
	b.c = c
	return c, de, nil
}

// FS reaches node n's knobs through its agent; pod namespaces are named
// "pod:NS/NAME". n is always one of this engine's nodes.
func (b *Engine) FS(n engine.Node) tune.FS {
	kn, ok := n.(*Node)
	if b.c == nil || !ok || kn == nil {
		return unavailableFS{}
	}
	return kn.Agent()
}

// Kernel implements engine.Engine: a node's kernel is read by its agent.
// n is always one of this engine's nodes.
func (b *Engine) Kernel(n engine.Node) engine.Kernel {
	return agentKernel{a: n.(*Node).Agent()}
}

// Describe implements engine.Engine.
func (b *Engine) Describe(r engine.Run, c engine.Cluster, e *results.Env) {
	kc := c.(*Cluster)
	srv, cli := kc.ServerNode(), kc.ClientNode()
	a := srv.Agent()
	describeServer(e, srv, kc.Config().Image, r.Study)
	describeClient(e, cli)
	// Round trips wait for the server node's cores to wake.
	e.CPUIdle = cpuidle.Machine(tune.HostSysfs(a))
	if e.CPUIdle != nil {
		// The node's /dev/cpu_dma_latency is not the agent's to read.
		e.CPUIdle.Limits = cpuidle.ReadLimits(tune.HostSysfs(a), "")
	}
	// As preflight found them (cpusOf), which the RPS masks spanned.
	e.NodeCPUs = map[string][]int{srv.Name(): b.cpus[srv.Name()], cli.Name(): b.cpus[cli.Name()]}
	e.Offloads = map[string]map[string]bool{}
	for _, n := range []*Node{srv, cli} {
		ifaces := []netns.Iface{n.Underlay()}
		if t, ok := n.Tunnel(); ok {
			ifaces = append(ifaces, t)
		}
		for _, ifc := range ifaces {
			if ifc.Name == "" {
				continue
			}
			if f := offload.Features(n, ifc.Name); f != nil {
				e.Offloads[n.Name()+"/"+ifc.Name] = f
			}
		}
	}
	cni := b.cni
	e.CNI = &results.CNI{Name: cni.Name, Mode: cni.Mode, Evidence: cni.Evidence, LabelStandsFor: b.labelStandsFor}
	e.Notes = append(e.Notes,
		fmt.Sprintf("kube engine: server node %s, client node %s, namespace %s; the cells are labelled with the study's datapath (%s) but were measured on the cluster's CNI, %s",
			srv.Name(), cli.Name(), kc.Config().Namespace, strings.Join(r.Study.DatapathNames(), ", "), cni),
		"kube engine: host, kernel, CPU model and count, NUMA nodes and per-core figures are the server node's; workload pods share the node with everything else scheduled there",
		kc.Addressing().Note())
	if kc.Addressing().DNS && slices.ContainsFunc(r.Study.Variants(), func(w study.Workload) bool { return w.Tool == "sockperf" }) {
		e.Notes = append(e.Notes, "kube engine: sockperf takes addresses only, so its clients are given the ClusterIP the Service name resolves to")
	}
	for _, n := range []*Node{srv, cli} {
		if n.underlayNote != "" {
			e.Notes = append(e.Notes, n.underlayNote)
		}
	}
	if counts, from, err := a.Iptables(); err == nil {
		e.Notes = append(e.Notes, iptablesNote(counts, from))
	}
}

// iptablesNote is env.json's note of the server node's iptables rule
// counts, with the iptables-save that read them (the backend holding the
// node's rules) where the agent says.
func iptablesNote(counts map[string]int, from string) string {
	if from != "" {
		from = " (" + from + ")"
	}
	return fmt.Sprintf("server node iptables%s: %d chains, %d rules", from, counts["chains"], counts["rules"])
}

// unavailableFS is the FS before the cluster is up.
type unavailableFS struct{}

var errNoCluster = errors.New("kube engine: no cluster yet")

func (unavailableFS) Read(string, string, string) (string, error)   { return "", errNoCluster }
func (unavailableFS) Write(string, string, string, string) error    { return errNoCluster }
func (unavailableFS) List(string, string, string) ([]string, error) { return nil, errNoCluster }

// kubeUnsupported names, in one error, every workload option the kube
// engine cannot run yet (the drivers' descriptions say which); it is
// checked before anything is created.
func kubeUnsupported(s *study.Study) error {
	var bad []string
	for _, w := range s.Spec.Workloads {
		for _, why := range registry.KubeUnsupported(w) {
			bad = append(bad, fmt.Sprintf("workload %s: %s", w.Name, why))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the kube engine cannot run %s; run it with the local engine, or remove it for --engine kube", strings.Join(bad, "; "))
}

// kubeTools are the programs a study execs in the image (the drivers'
// descriptions say which): checked by the agents before any workload pod
// exists.
func kubeTools(s *study.Study) []string {
	var tools []string
	add := func(t ...string) {
		for _, x := range t {
			if !slices.Contains(tools, x) {
				tools = append(tools, x)
			}
		}
	}
	for _, p := range registry.StudyPrograms(s) {
		add(p.Name)
	}
	// The agent runs the collectors' programs on the node (same image as
	// the pods).
	for _, w := range s.Variants() {
		add(collect.Programs(w)...)
	}
	return tools
}
