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

// remoteStub is a backend whose nodes are elsewhere (like kube's): its
// preflight passes, nothing else is called.
type remoteStub struct{}

func (remoteStub) name() string                                         { return "stub" }
func (remoteStub) preflight(context.Context, *study.Study, *plan) error { return nil }
func (remoteStub) up(context.Context, *run, study.Datapath) (engine.Cluster, error) {
	panic("not called")
}
func (remoteStub) configure(context.Context, *run, engine.Cluster, study.Datapath) (results.DatapathEnv, error) {
	panic("not called")
}
func (remoteStub) fs() tune.FS                                 { return nil }
func (remoteStub) sampler(engine.Node) cpuSampler              { return nil }
func (remoteStub) reader(engine.Node) nodeReader               { return nil }
func (remoteStub) describe(*run, engine.Cluster, *results.Env) {}
func (remoteStub) remote() bool                                { return true }

func stubStudy(t *testing.T, workloads string) *study.Study {
	t.Helper()
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings: [baseline]
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

// On a cluster, tools run in the workload image: a missing local tool
// must not stop the run, but what kube cannot run must be refused early,
// all of it in one error.
func TestPreflightRemoteBackend(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tools on "this machine"
	for _, wl := range []string{"[{tool: iperf3}]", "[{tool: sockperf}]", "[{tool: ab, size: 1M}]", "[{tool: iperf3, pin: {server: '0', client: '0'}}]",
		"[{tool: iperf3, cpp: true, counters: true}]"} {
		if _, err := preflight(context.Background(), remoteStub{}, stubStudy(t, wl)); err != nil {
			t.Errorf("%s on a remote engine: %v", wl, err)
		}
	}
	_, err := preflight(context.Background(), remoteStub{}, stubStudy(t,
		"[{name: bg, tool: iperf3, background: {connections: [0, 10], pairs: 2, rate: 10M}}, {name: c, tool: iperf3}, {name: bg2, tool: iperf3, background: {connections: [5], pairs: 1, rate: 10M}}]"))
	if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "the kube engine cannot run workload bg: background load") ||
		!strings.Contains(err.Error(), "; workload bg2: background load") || strings.Contains(err.Error(), "workload c") {
		t.Errorf("got %v", err)
	}
}

func TestKubeTools(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}, {tool: ab, size: 1M, pin: {server: '0', client: '1'}}, {tool: sockperf}, {name: c, tool: iperf3, cpp: true, counters: true}]")
	if got := strings.Join(kubeTools(s), ","); got != "iperf3,ab,nginx,taskset,sockperf,perf,iptables-save,nft" {
		t.Errorf("tools %s", got)
	}
}
