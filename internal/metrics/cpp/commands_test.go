package cpp_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/pktgen"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// notOnThePath are programs a tool runs that carry none of its traffic:
// their samples need not count.
var notOnThePath = map[string]string{
	"timeout": "qperf's: it waits on the server and stops it",
}

// Every registered tool that offers cpp: true has its programs in the
// components file's commands, else the samples of its own process
// context (send and receive system calls, copies) are excluded and its
// cost per packet is short by them. An external test package, so it can
// import the registry whatever the registry imports.
func TestCommandsCoverCPPTools(t *testing.T) {
	m, err := cpp.DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	offered := 0
	for _, tool := range registry.Tools() {
		if _, ok := tool.Option(study.OptCPP); !ok {
			continue
		}
		offered++
		for _, p := range tool.Programs {
			if _, skip := notOnThePath[p.Name]; skip {
				continue
			}
			// perf names a process by its comm, the executable's name
			// cut to 15 bytes (TASK_COMM_LEN).
			comm := p.Name[:min(len(p.Name), 15)]
			if !m.Counts(comm) {
				t.Errorf("tool %s offers %s but its program %s is not in components.yaml's commands", tool.Name, study.OptCPP, p.Name)
			}
		}
	}
	if offered == 0 {
		t.Fatal("no registered tool offers cpp: the test checks nothing")
	}
}

// The pktgen sender (sender: pktgen, which iperf3's UDP workloads offer
// with cpp: true) carries its traffic in threads that are no registry
// program: the generator threads kpktgend_N, which send and, with
// softirqs back on, run the receive path veth's netif_rx queued, and the
// receiver's thread inside cnibench. Left out, only the softirqs that
// ksoftirqd ran remained, divided by every packet the device counted.
func TestCommandsCoverSenders(t *testing.T) {
	m, err := cpp.DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	for _, comm := range []string{pktgen.ThreadName(0), pktgen.ThreadName(1023), pktgen.ReceiverComm} {
		if len(comm) > 15 {
			t.Errorf("%s is longer than a comm (15 bytes)", comm)
		}
		if !m.Counts(comm) {
			t.Errorf("sender %s's thread %s is not in components.yaml's commands", study.SenderPktgen, comm)
		}
	}
	if m.Counts("cnibench") {
		t.Error("cnibench counts: its other threads (the collectors, the runner) are no workload")
	}
}
