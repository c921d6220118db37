package sockperf

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

type addrPod struct{}

func (addrPod) Name() string { return "p" }
func (addrPod) Node() string { return "n" }
func (addrPod) IP() net.IP   { return net.IPv4(10, 0, 0, 1) }
func (addrPod) Start(context.Context, []string) (engine.Process, error) {
	return nil, nil
}

func TestArgv(t *testing.T) {
	d := New()
	tr := workload.Trial{Pairs: []workload.Pair{{Server: addrPod{}, Client: addrPod{}}}, Duration: 4 * time.Second,
		Spec: study.Workload{Tool: "sockperf", Protocol: "tcp", MessageSize: 14, Pin: &study.Pin{Client: "1"}}}
	p, err := d.plan(tr)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.clientArgv(p, "10.0.0.1", 11111), " "); got != "taskset -c 1 sockperf ping-pong --tcp -i 10.0.0.1 -p 11111 -t 4 -m 14 --full-rtt" {
		t.Errorf("client %s", got)
	}
	if got := strings.Join(d.serverArgv(p, "10.0.0.1", 11111), " "); got != "sockperf server --tcp -i 10.0.0.1 -p 11111 --uc-reuseaddr" {
		t.Errorf("server %s", got)
	}
	tr.Spec.MessageSize = 1
	if _, err := d.plan(tr); err == nil || !strings.Contains(err.Error(), "smallest message is 14 B") {
		t.Errorf("1 B: %v", err)
	}
	tr.Spec = study.Workload{Tool: "sockperf", Protocol: "udp", MessageSize: 64}
	p, _ = d.plan(tr)
	if got := strings.Join(d.clientArgv(p, "10.0.0.1", 1), " "); strings.Contains(got, "--tcp") {
		t.Errorf("udp client %s", got)
	}
}

// A server behind a Service (kube) listens on its own address; the
// client, which cannot resolve names, is given the Service's address.
func TestRunFrontedServer(t *testing.T) {
	out, err := os.ReadFile("testdata/tcp-64-client.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := &workloadtest.RecPod{PodIP: net.IPv4(10, 244, 1, 5), Front: net.IPv4(10, 96, 0, 20), Address: "srv.cnibench.svc.cluster.local"}
	cli := &workloadtest.RecPod{PodIP: net.IPv4(10, 244, 2, 5), Reply: out}
	tr := workload.Trial{Pairs: []workload.Pair{{Server: srv, Client: cli}}, Duration: 2 * time.Second, BasePort: 5201,
		Spec: study.Workload{Tool: "sockperf", Protocol: "tcp", MessageSize: 64}}
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics[MetricTPS] <= 0 {
		t.Errorf("metrics %v", res.Metrics)
	}
	if got := strings.Join(srv.Argvs()[0], " "); got != "sockperf server --tcp -i 10.244.1.5 -p 5201 --uc-reuseaddr" {
		t.Errorf("server %s", got)
	}
	if got := strings.Join(cli.Argvs()[0], " "); !strings.Contains(got, "-i 10.96.0.20 -p 5201") {
		t.Errorf("client %s", got)
	}
}
