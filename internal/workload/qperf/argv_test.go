package qperf

import (
	"context"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// Two pairs: each server listens on its own port; a TCP data port is the
// server's second port (its listen port + engine.SecondPortOffset, which
// the kube engine's Services forward), UDP data shares the listen port's
// number. The client is pinned with taskset, as every tool is.
func TestRunArgv(t *testing.T) {
	reply := read(t, "tcp-1-client.txt")
	var pairs []workload.Pair
	var srvs, clis []*workloadtest.RecPod
	for i := range 2 {
		ip := net.IPv4(10, 244, 1, byte(5+i))
		// Addr is what engine.Addr gives clients (a kube pod's Service
		// name); qperf resolves names itself.
		s := &workloadtest.RecPod{PodIP: ip, Address: ip.String()}
		c := &workloadtest.RecPod{PodIP: net.IPv4(10, 244, 2, byte(5+i)), Reply: reply}
		srvs, clis = append(srvs, s), append(clis, c)
		pairs = append(pairs, workload.Pair{Server: s, Client: c})
	}
	tr := workload.Trial{Pairs: pairs, Duration: 3 * time.Second, BasePort: 5201,
		Spec: study.Workload{Tool: "qperf", Protocol: "tcp", MessageSize: 1, Pin: &study.Pin{Client: "1"}}}
	started := false
	tr.Started = func(time.Time) { started = true }
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Error("Started not called")
	}
	want := []struct{ srv, cli string }{
		{"timeout 28 qperf -lp 5201", "taskset -c 1 qperf 10.244.1.5 -lp 5201 -ip 6201 -m 1 -t 3 -ws 5 -e 6 -uu -vs -vu tcp_lat"},
		{"timeout 28 qperf -lp 5202", "taskset -c 1 qperf 10.244.1.6 -lp 5202 -ip 6202 -m 1 -t 3 -ws 5 -e 6 -uu -vs -vu tcp_lat"},
	}
	for i, w := range want {
		if got := strings.Join(srvs[i].Argvs()[0], " "); got != w.srv {
			t.Errorf("server %d: %s", i, got)
		}
		if got := strings.Join(clis[i].Argvs()[0], " "); got != w.cli {
			t.Errorf("client %d: %s", i, got)
		}
	}
	// tcp-1-client.txt: latency 26468.3 ns, msg_rate 37781 /sec.
	m := res.Metrics
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*b }
	if !near(m[MetricMean], 2*26.4683) || !near(m[MetricHalfRTT], 26.4683) || !near(m[MetricTPS], 37781.0/2) || !near(m[MetricTPSSum], 37781) || m[MetricMsgBytes] != 1 {
		t.Errorf("metrics %v", m)
	}
	if len(res.PerReplica) != 2 {
		t.Errorf("per replica %v", res.PerReplica)
	}

	d := New()
	p, err := d.plan(workload.Trial{Pairs: pairs[:1], Duration: 2 * time.Second, BasePort: 5201,
		Spec: study.Workload{Tool: "qperf", Protocol: "udp", MessageSize: 64}})
	if err != nil {
		t.Fatal(err)
	}
	l, dp := p.ports(5201, 0)
	if got := strings.Join(d.clientArgv(p, "10.0.0.1", l, dp), " "); got != "qperf 10.0.0.1 -lp 5201 -ip 5201 -m 64 -t 2 -ws 5 -e 6 -uu -vs -vu udp_lat" {
		t.Errorf("udp client %s", got)
	}
}

func TestPlanRejects(t *testing.T) {
	pod := &workloadtest.RecPod{PodIP: net.IPv4(10, 0, 0, 1)}
	ok := workload.Trial{Pairs: []workload.Pair{{Server: pod, Client: pod}}, Duration: 2 * time.Second, BasePort: 5201,
		Spec: study.Workload{Tool: "qperf", MessageSize: 1}}
	if _, err := New().plan(ok); err != nil {
		t.Fatalf("valid trial: %v", err)
	}
	for name, mod := range map[string]func(*workload.Trial){
		"no pairs":        func(t *workload.Trial) { t.Pairs = nil },
		"too big":         func(t *workload.Trial) { t.Spec.MessageSize = MaxMessage + 1 },
		"negative":        func(t *workload.Trial) { t.Spec.MessageSize = -1 },
		"part of second":  func(t *workload.Trial) { t.Duration = 1500 * time.Millisecond },
		"ports too high":  func(t *workload.Trial) { t.BasePort = 65535 },
		"server lacks IP": func(t *workload.Trial) { t.Pairs = []workload.Pair{{Server: &workloadtest.RecPod{}, Client: pod}} },
	} {
		tr := ok
		mod(&tr)
		if _, err := New().plan(tr); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	p, _ := New().plan(workload.Trial{Pairs: ok.Pairs, Duration: time.Second, BasePort: 1, Spec: study.Workload{Tool: "qperf"}})
	if p.msg != DefaultMessage || DefaultMessage != 1 {
		t.Errorf("default message %d", p.msg)
	}
}
