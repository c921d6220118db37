package runner

import (
	"context"
	"strings"
	"testing"

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
}

func (stubEngine) Name() string { return "stub" }
func (e stubEngine) Preflight(_ context.Context, _ *study.Study, n engine.Needs) (engine.Facts, error) {
	if e.needs != nil {
		*e.needs = n
	}
	if e.checkTools {
		return engine.Facts{Remote: e.remote}, n.CheckTools()
	}
	return engine.Facts{Remote: e.remote}, nil
}
func (stubEngine) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	panic("not called")
}
func (stubEngine) FS() tune.FS                                       { return nil }
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
