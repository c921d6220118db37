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

// On a cluster, tools run in the workload image: a missing local iperf3
// must not stop the run, but local-only workloads must be refused early.
func TestPreflightRemoteBackend(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no iperf3 on "this machine"
	if _, err := preflight(context.Background(), remoteStub{}, stubStudy(t, "[{tool: iperf3}]")); err != nil {
		t.Fatalf("iperf3 study on a remote engine: %v", err)
	}
	for _, wl := range []string{"[{tool: iperf3, cpp: true}]", "[{tool: sockperf}]", "[{tool: iperf3, counters: true}]"} {
		_, err := preflight(context.Background(), remoteStub{}, stubStudy(t, wl))
		if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "the kube engine runs iperf3 workloads only") {
			t.Errorf("%s: got %v", wl, err)
		}
	}
}
