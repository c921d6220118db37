package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// stubEngine is an engine whose preflight only records what it was
// given; nothing else is called.
type stubEngine struct {
	needs      *engine.Needs
	checkTools bool
	remote     bool // nodes are other machines (kube)
	// refuse, when set, is the knob need the engine refuses.
	refuse  string
	machine cpuset.Set
	// client are the client node's CPUs when it says (a cluster's).
	client cpuset.Set
	// topo is the server node's CPU topology when it read one (a cluster's).
	topo *engine.NodeTopology
}

func (stubEngine) Name() string { return "stub" }
func (e stubEngine) Preflight(_ context.Context, _ *study.Study, n engine.Needs) (engine.Facts, error) {
	if e.needs != nil {
		*e.needs = n
	}
	for _, k := range n.Knobs {
		if k.What == e.refuse {
			return engine.Facts{}, k.Refusal("", errors.New("kernel feature x is not available"))
		}
	}
	f := engine.Facts{Remote: e.remote, MachineCPUs: e.machine, ClientCPUs: e.client, Topology: e.topo}
	if e.checkTools {
		return f, n.CheckTools()
	}
	return f, nil
}
func (stubEngine) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	panic("not called")
}
func (stubEngine) FS(engine.Node) tune.FS                            { return nil }
func (stubEngine) Kernel(engine.Node) engine.Kernel                  { return nil }
func (stubEngine) Describe(engine.Run, engine.Cluster, *results.Env) {}

func stubStudy(t *testing.T, workloads string) *study.Study {
	t.Helper()
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge, {name: b2, type: bridge, offloads: {tso: off}, policy: np}]
  tunings: [baseline, rps-7]
  workloads: ` + workloads + `
  replicas: [1]
  trials: 1
  duration: 3s
`
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()}
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The runner checks no tool itself: an engine whose tools run elsewhere
// (kube's, in the workload image) passes without them, an engine that
// checks them here (local) fails on a missing one. The runner hands the
// engine each datapath built once, with what its knobs need.
func TestPreflightLeavesToolsToEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tools on "this machine"
	for _, wl := range []string{"[{tool: iperf3}]", "[{tool: sockperf}]", "[{tool: ab, size: 1M}]",
		"[{tool: iperf3, cpp: true, counters: true}]"} {
		var n engine.Needs
		p, err := preflight(context.Background(), stubEngine{needs: &n}, stubStudy(t, wl))
		if err != nil {
			t.Errorf("%s on a remote engine: %v", wl, err)
			continue
		}
		if len(n.Datapaths) != 2 || len(p.datapaths) != 2 || n.Datapaths[0].Built == nil || n.Datapaths[0].Built != p.datapaths["bridge"].Built {
			t.Errorf("%s: datapaths %+v", wl, n.Datapaths)
		}
		if f := strings.Join(n.Datapaths[1].Features, ","); !strings.Contains(f, "ethtool") || !strings.Contains(f, "iptables-restore") {
			t.Errorf("%s: b2 needs %s", wl, f)
		}
		if len(n.Knobs) != 2 || len(n.Knobs[0].Features) != 0 || n.Knobs[1].What != "tuning rps-7" || len(n.Knobs[1].Features) == 0 {
			t.Errorf("%s: knob needs %+v", wl, n.Knobs)
		}
		if _, err := preflight(context.Background(), stubEngine{needs: &n, checkTools: true}, stubStudy(t, wl)); err == nil || !IsPreflight(err) {
			t.Errorf("%s: missing tools passed a local check: %v", wl, err)
		}
	}
}

// parseSpec is study file s.yaml with the given spec lines (each
// "  field: ..."), one 3-second trial.
func parseSpec(t *testing.T, spec string) *study.Study {
	t.Helper()
	src := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n" + spec + "  trials: 1\n  duration: 3s\n"
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A preflight problem of a study field is reported at the field's line,
// as a parse error is, on one line even when there are several.
func TestPreflightErrorsAtTheirLine(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tools on "this machine"
	const plain = "  datapaths: [bridge]\n  tunings: [baseline, rps-7]\n  workloads: [{tool: iperf3}]\n"
	two := cpuset.Range(2)
	for _, tc := range []struct {
		name, spec string
		e          stubEngine
		want       string
	}{
		{"tool", plain, stubEngine{checkTools: true, machine: two},
			"s.yaml:7: spec.workloads[0].tool: workload iperf3-tcp: "},
		{"knob", plain, stubEngine{refuse: "tuning rps-7", machine: two},
			"s.yaml:6: spec.tunings[1]: tuning rps-7: kernel feature x is not available"},
		{"node cpus", "  nodes:\n    server: {cpus: \"1-2\"}\n" + plain, stubEngine{machine: two},
			"s.yaml:6: spec.nodes.server.cpus: CPU 2 does not exist (this machine has 0-1)"},
		{"rps cpus", "  nodes:\n    server: {cpus: \"0\"}\n  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: r1, rps: {cpus: \"1\"}}\n  workloads: [{tool: iperf3}]\n",
			stubEngine{machine: two}, "s.yaml:10: spec.tunings[1].rps.cpus: tuning r1: rps cpus 1: CPU 1 is not a CPU of the server node (0)"},
		{"mss, twice", "  datapaths: [bridge, flannel-vxlan]\n  workloads:\n    - {name: a, tool: iperf3}\n    - {name: b, tool: iperf3, mss: 1420}\n    - {name: c, tool: iperf3, mss: 1430}\n",
			stubEngine{machine: two}, "s.yaml:8: spec.workloads[1]: workload b: mss 1420: datapath flannel-vxlan has pod MTU 1450"},
	} {
		_, err := preflight(context.Background(), tc.e, parseSpec(t, tc.spec))
		if err == nil || !IsPreflight(err) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant %s...", tc.name, err, tc.want)
		}
		if tc.name == "mss, twice" && (err == nil || !strings.HasSuffix(err.Error(), "(and 1 more problem: run again after fixing this one to see the next)")) {
			t.Errorf("%s: %v: the second problem not counted", tc.name, err)
		}
	}
}

// An RPS CPU list is checked against the node of each end its tuning
// goes on: the client node's CPUs for side: client (pinned, or a
// cluster's client node's), the server's too when clients run there.
func TestRPSCPUsPerEnd(t *testing.T) {
	const pinned = "  nodes:\n    server: {cpus: \"0\"}\n    client: {cpus: \"1\"}\n"
	spec := func(nodes, side, cpus, placement string) string {
		return nodes + "  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: r1, side: " + side + ", rps: {cpus: \"" + cpus + "\"}}\n" +
			"  workloads: [{tool: iperf3, placement: " + placement + "}]\n"
	}
	two := cpuset.Range(2)
	for _, tc := range []struct {
		name, spec string
		e          stubEngine
		want       string // "" when accepted
	}{
		{"client's CPU at the client", spec(pinned, "client", "1", "inter-node"), stubEngine{machine: two}, ""},
		{"server's CPU at the client", spec(pinned, "client", "0", "inter-node"), stubEngine{machine: two},
			"s.yaml:11: spec.tunings[1].rps.cpus: tuning r1: rps cpus 0: CPU 0 is not a CPU of the client node (1)"},
		{"both ends", spec(pinned, "both", "1", "inter-node"), stubEngine{machine: two},
			"s.yaml:11: spec.tunings[1].rps.cpus: tuning r1: rps cpus 1: CPU 1 is not a CPU of the server node (0)"},
		{"clients on the server node", spec(pinned, "client", "1", "intra-node"), stubEngine{machine: two},
			"s.yaml:11: spec.tunings[1].rps.cpus: tuning r1: rps cpus 1: CPU 1 is not a CPU of the server node (0)"},
		{"softirq core at a one-CPU client", spec(pinned, "client", "all-but-softirq-core", "inter-node"), stubEngine{machine: two},
			"s.yaml:11: spec.tunings[1].rps.cpus: tuning r1: rps cpus all-but-softirq-core: the client node has only CPU 1, none is left without it"},
		{"softirq core on shared CPUs", spec("", "both", "all-but-softirq-core", "inter-node"), stubEngine{machine: two}, ""},
		{"a cluster's larger client node", spec("", "client", "3", "inter-node"), stubEngine{machine: two, client: cpuset.Range(4), remote: true}, ""},
		{"a cluster's server node", spec("", "server", "3", "inter-node"), stubEngine{machine: two, client: cpuset.Range(4), remote: true},
			"s.yaml:8: spec.tunings[1].rps.cpus: tuning r1: rps cpus 3: CPU 3 is not a CPU of the server node (0-1)"},
	} {
		_, err := preflight(context.Background(), tc.e, parseSpec(t, tc.spec))
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && !strings.HasPrefix(got, tc.want)) {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
}

// A node's CPU the machine has but the cgroup's cpuset leaves out is told
// apart from one that does not exist.
func TestNodeCPUsOutsideTheCpuset(t *testing.T) {
	machine, online := cpuset.Set{2, 3}, cpuset.Range(4)
	if set, err := nodeCPUs("server", "2-3", machine, online); err != nil || set.String() != "2-3" {
		t.Errorf("within: %v %v", set, err)
	}
	for list, want := range map[string]string{
		"1": "spec.nodes.server.cpus: CPU 1 is outside the cpuset cnibench runs in (2-3), which its nodes share",
		"7": "spec.nodes.server.cpus: CPU 7 does not exist (this machine has 0-3)",
	} {
		if _, err := nodeCPUs("server", list, machine, online); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", list, err, want)
		}
	}
}

// localStub is a stubEngine named as the local engine, whose nodes are
// this machine, that records whether its preflight (the probes) ran.
type localStub struct {
	stubEngine
	probed *bool
}

func (localStub) Name() string { return localEngine }
func (e localStub) Preflight(ctx context.Context, s *study.Study, n engine.Needs) (engine.Facts, error) {
	*e.probed = true
	return e.stubEngine.Preflight(ctx, s, n)
}

// TestPureChecksBeforeProbes: a study's CPU list this machine lacks is
// refused before the engine's preflight, whose probes load modules; it
// was checked after them, so an exit 2 ("host untouched") could follow a
// host change.
func TestPureChecksBeforeProbes(t *testing.T) {
	s := cpuStudy(t, "1000")
	probed := false
	_, err := preflight(context.Background(), localStub{probed: &probed}, s)
	if err == nil || !strings.Contains(err.Error(), "spec.nodes.server.cpus") || !IsPreflight(err) {
		t.Fatalf("preflight = %v; want the CPU list refused", err)
	}
	if probed {
		t.Error("the engine probed before the study's CPU list was refused")
	}
	// An engine whose nodes are elsewhere (kube) knows their CPUs only
	// from its preflight: checked after it.
	_, err = preflight(context.Background(), stubEngine{remote: true, machine: cpuset.Range(4)}, s)
	if err == nil || !strings.Contains(err.Error(), "spec.nodes.server.cpus") {
		t.Fatalf("preflight of a cluster = %v; want the CPU list refused", err)
	}
}

// cpuStudy is a one-cell study whose server node is pinned to cpus.
func cpuStudy(t *testing.T, cpus string) *study.Study {
	t.Helper()
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings: [baseline]
  workloads: [{tool: iperf3}]
  nodes: {server: {cpus: "` + cpus + `"}}
  replicas: [1]
  trials: 1
  duration: 3s
`
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
