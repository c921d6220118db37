package sockperf

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
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
