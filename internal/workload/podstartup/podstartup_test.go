package podstartup

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

type pod struct{ node string }

func (p pod) Name() string { return "srv0" }
func (p pod) Node() string { return p.node }
func (p pod) IP() net.IP   { return net.IPv4(10, 0, 0, 2) }
func (p pod) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("no program runs")
}

// starter records what it was asked and returns canned times.
type starter struct {
	node      string
	n, conc   int
	times     []engine.PodTime
	err       error
	startedAt time.Time
}

func (s *starter) StartPods(_ context.Context, node string, n, conc int) ([]engine.PodTime, error) {
	s.node, s.n, s.conc, s.startedAt = node, n, conc, time.Now()
	return s.times, s.err
}

func burst() []engine.PodTime {
	ph := func(netns, link, other time.Duration) []engine.Phase {
		return []engine.Phase{{Name: engine.PhaseNetns, Took: netns}, {Name: "link", Took: link}, {Name: "cni bridge+portmap", Took: other}}
	}
	return []engine.PodTime{
		{Pod: "srvb0", Setup: 3 * time.Millisecond, Ready: 3 * time.Millisecond, Teardown: time.Millisecond, Phases: ph(time.Millisecond, time.Millisecond, time.Millisecond)},
		{Pod: "srvb1", Setup: 5 * time.Millisecond, Ready: 9 * time.Millisecond, Teardown: 3 * time.Millisecond, Phases: ph(2*time.Millisecond, 2*time.Millisecond, time.Millisecond)},
	}
}

func TestRunStartsTheBurstOnTheServerNode(t *testing.T) {
	st := &starter{times: burst()}
	var started time.Time
	w := study.Workload{Tool: "podstartup", Concurrency: []int{2}, Pods: 6}
	res, err := New().Run(context.Background(), workload.Trial{
		Pairs: []workload.Pair{{Server: pod{"server"}, Client: pod{"client"}}}, Spec: w, Starter: st,
		Started: func(t0 time.Time) { started = t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.node != "server" || st.n != 6 || st.conc != 2 {
		t.Errorf("StartPods(%s, %d, %d), want (server, 6, 2)", st.node, st.n, st.conc)
	}
	if started.IsZero() || started.After(st.startedAt) {
		t.Errorf("Started at %v, the burst at %v: the window must open first", started, st.startedAt)
	}
	want := map[string]float64{
		MetricPods: 2, MetricStartup: 6, MetricStartupMax: 9, MetricSetup: 4, MetricTeardown: 2,
		"phase_netns_ms": 1.5, "phase_link_ms": 1.5, "phase_cni_bridge_portmap_ms": 1,
	}
	for k, v := range want {
		if got, ok := res.Metrics[k]; !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (set %v), want %v", k, got, ok, v)
		}
	}
	if len(res.Metrics) != len(want) {
		t.Errorf("metrics %v, want exactly %v", res.Metrics, want)
	}
}

func TestRunDefaultsToAllAtOnce(t *testing.T) {
	st := &starter{times: burst()}
	_, err := New().Run(context.Background(), workload.Trial{
		Pairs: []workload.Pair{{Server: pod{"server"}}}, Spec: study.Workload{Concurrency: []int{20}}, Starter: st,
	})
	if err != nil || st.n != 20 || st.conc != 20 {
		t.Errorf("StartPods(_, %d, %d) err %v, want 20 pods 20 at once", st.n, st.conc, err)
	}
}

func TestRunErrors(t *testing.T) {
	pairs := []workload.Pair{{Server: pod{"server"}}}
	if _, err := New().Run(context.Background(), workload.Trial{Pairs: pairs}); err == nil || !strings.Contains(err.Error(), "cannot start pods") {
		t.Errorf("no starter: %v", err)
	}
	st := &starter{err: errors.New("attach failed")}
	if _, err := New().Run(context.Background(), workload.Trial{Pairs: pairs, Starter: st, Spec: study.Workload{Concurrency: []int{1}}}); err == nil || !strings.Contains(err.Error(), "attach failed") {
		t.Errorf("starter error: %v", err)
	}
}

const studyBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: a
spec:
  tunings: [baseline]
  replicas: [1]
  duration: 3s
  trials: 1
  datapaths:
    - name: b
      type: bridge
  workloads:
`

// TestStudyBadInput: the study file's mistakes about a burst are refused
// at the field, with file and line, by the tool's own description.
func TestStudyBadInput(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: []spec.Tool{New().Describe()}}
	for _, c := range []struct{ w, want string }{
		{"{tool: podstartup, concurrency: [1, 20], pods: 10}", "a.yaml:14: spec.workloads[0].concurrency[1]: 20 pods at once is more than the 10 pods"},
		{"{tool: podstartup, pods: -1}", "spec.workloads[0].pods: pods must be between 1 and 200"},
		{"{tool: podstartup, concurrency: [0]}", "spec.workloads[0].concurrency[0]: concurrency must be between 1 and 200"},
		{"{tool: podstartup, concurrency: [500]}", "concurrency must be between 1 and 200"},
		{"{tool: podstartup, rate: 1G}", "tool podstartup has no option rate"},
	} {
		_, err := study.Parse("a.yaml", []byte(studyBase+"    - "+c.w+"\n"), study.Options{}, cat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.w, err, c.want)
		}
	}
	s, err := study.Parse("a.yaml", []byte(studyBase+"    - {tool: podstartup, concurrency: [1, 5, 10]}\n"), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Variants(); len(v) != 3 || v[2].Concurrency[0] != 10 || v[2].Pods != 0 {
		t.Errorf("variants %+v: want one per concurrency, pods unset (all at once)", v)
	}
}

// A whole pod's start (the kube engine's create to Ready) is
// pod_start_ms, not setup_ms: the paper's network start-up of Fig. 15a
// is set beside setup_ms, the network's share alone.
func TestSummarizeWholePods(t *testing.T) {
	net := Summarize([]engine.PodTime{{Setup: 40 * time.Millisecond}, {Setup: 60 * time.Millisecond}})
	whole := Summarize([]engine.PodTime{{Setup: 1100 * time.Millisecond, WholePod: true}, {Setup: 1300 * time.Millisecond, WholePod: true}})
	if net[MetricSetup] != 50 || net[MetricPodStart] != 0 {
		t.Errorf("network set-up: %v", net)
	}
	if _, ok := whole[MetricSetup]; ok || whole[MetricPodStart] != 1200 {
		t.Errorf("whole pods: %v, want pod_start_ms 1200 and no setup_ms", whole)
	}
}
