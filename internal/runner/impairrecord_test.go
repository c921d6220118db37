package runner

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRecordImpairment: env.json says what each impairment installed:
// its place, device and netem as installed, the queue limit Apply raised
// under the link-rate shaper marked; the veths of a client-pods
// impairment's trials gathered in one entry; kept across a resume.
// Before, env.json said none of it and the report could not either.
func TestRecordImpairment(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereUnderlay, Direction: study.DirEgress}
	var log bytes.Buffer
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	low := study.Impairment{Name: "delay-low"}
	lowSpec := impair.Spec{Delay: 10 * time.Millisecond, Jitter: time.Millisecond, DelayCorrelation: 25}
	raised := lowSpec
	raised.Limit = 2891
	under := engine.Impaired{Node: namedNode{name: "cnb-client"}, Devs: []netns.Iface{{Netns: "cnb-c", Name: "eth1"}}, Netem: []impair.Spec{raised}}
	if err := cut.recordImpairment(results.Cell{Datapath: "flannel-vxlan", Impairment: "delay-low"}, low, under); err != nil {
		t.Fatal(err)
	}
	// Nothing installed (none): nothing recorded.
	if err := cut.recordImpairment(results.Cell{Datapath: "flannel-vxlan"}, study.Impairment{Name: "none"}, engine.Impaired{}); err != nil {
		t.Fatal(err)
	}
	want := []results.ImpairmentSetting{{Datapath: "flannel-vxlan", Where: "underlay", Direction: "egress", Node: "cnb-client",
		Devices: []string{"eth1"}, Netem: "delay 10ms 1ms 25% limit 2891", LimitRaised: true}}
	if got := cut.env.Impairments; len(got) != 1 || !reflect.DeepEqual(got["delay-low"], want) {
		t.Errorf("env impairments %+v, want delay-low's %+v", got, want)
	}

	res := resumeFrom(t, cut, &log, nil)
	if !reflect.DeepEqual(res.priorImpairments["delay-low"], want) {
		t.Fatalf("resumed run's prior record %+v, want %+v", res.priorImpairments, want)
	}
	res.env.Impairments = res.priorImpairments // as writeEnv starts it
	res.study.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientPods, Direction: study.DirIngress}
	loss := study.Impairment{Name: "l", Fields: map[string]string{"loss": "1%", "limit": "5000"}}
	given := impair.Spec{Loss: 1, Limit: 5000}
	for _, veths := range [][]string{{"veth1", "veth2"}, {"veth3"}} {
		imp := engine.Impaired{Node: namedNode{name: "cnb-client"}}
		for _, v := range veths {
			imp.Devs = append(imp.Devs, netns.Iface{Name: "cnbifb" + v})
			imp.Netem = append(imp.Netem, given)
		}
		if err := res.recordImpairment(results.Cell{Datapath: "bridge", Impairment: "l"}, loss, imp); err != nil {
			t.Fatal(err)
		}
	}
	res.out.Close()
	run, err := results.Load(res.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	wantL := []results.ImpairmentSetting{{Datapath: "bridge", Where: "client-pods", Direction: "ingress", Node: "cnb-client",
		Devices: []string{"cnbifbveth1", "cnbifbveth2", "cnbifbveth3"}, Netem: "loss 1% limit 5000"}}
	if got := run.Env.Impairments; !reflect.DeepEqual(got["l"], wantL) || !reflect.DeepEqual(got["delay-low"], want) {
		t.Errorf("env.json impairments %+v, want l's %+v and delay-low's from before", got, wantL)
	}
}

// A resumed run's env.json, rewritten at its first cluster, keeps what
// the interrupted run's impairments installed.
func TestWriteEnvKeepsImpairmentRecord(t *testing.T) {
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	prior := map[string][]results.ImpairmentSetting{"loss-low": {{Datapath: "bridge", Where: "underlay", Direction: "egress", Devices: []string{"eth1"}, Netem: "loss 5% limit 1000"}}}
	r := &run{engine: envEngine{}, plan: &plan{remote: true}, out: w, study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{},
		opt: Options{Progress: progress.New(&bytes.Buffer{})}, priorImpairments: prior}
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.env.Impairments, prior) {
		t.Errorf("impairments %+v, want the interrupted run's %+v", r.env.Impairments, prior)
	}
}
