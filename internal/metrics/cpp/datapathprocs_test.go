package cpp

import (
	"context"
	"math"
	"slices"
	"testing"
)

// flannel-udp's flanneld carries every packet through user space (its
// TUN device, its UDP socket): its samples were other processes', left
// out of the total with nothing to say so. Counted (Map.Counting, from
// datapath.PacketProcesses), they are attributed by symbol like the
// workload's, its Go code in other; what still is left out (wireguard's
// kworker crypto, a shared machine's other users) is cpp_excluded_ns.
func TestDatapathProcessesCount(t *testing.T) {
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseReport([]byte(`
     10;iperf3         ;[k] tcp_sendmsg_locked
      6;flanneld       ;[k] udp_sendmsg
      3;flanneld       ;[k] tun_get_user
      4;flanneld       ;[.] runtime.mallocgc
      8;kworker/u8:2   ;[k] chacha20poly1305_encrypt
`))
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(m.Commands)
	plain := m.Attribute(p, 1)
	if plain.Total != 10 || plain.Excluded != 21 {
		t.Errorf("without the datapath's processes: total %v excluded %v, want 10 21", plain.Total, plain.Excluded)
	}
	b := m.Counting("flanneld").Attribute(p, 1)
	if b.Total != 23 || b.Excluded != 8 || b.ByComponent["tcp_udp"] != 16 || b.ByComponent[Other] != 7 {
		t.Errorf("flanneld counted: total %v excluded %v tcp_udp %v other %v, want 23 8 16 7",
			b.Total, b.Excluded, b.ByComponent["tcp_udp"], b.ByComponent[Other])
	}
	if !slices.Equal(m.Commands, before) || m.Counts("flanneld") {
		t.Errorf("Counting changed the map it was called on: %v", m.Commands)
	}
	pp := b.PerPacket(4, UnitNs)
	if math.Abs(pp[ExcludedMetric(UnitNs)]-2) > 1e-12 || math.Abs(pp[MetricTotal]-23.0/4) > 1e-12 {
		t.Errorf("per packet %v: want cpp_excluded_ns 2 beside cpp_total_ns 5.75", pp)
	}
	if pc := b.PerPacket(4, UnitCycles); pc[ExcludedMetric(UnitCycles)] != 2 || ExcludedMetric(UnitCycles) != "cpp_excluded_cycles" {
		t.Errorf("per packet in cycles %v", pc)
	}
	// A name is a name, not a pattern.
	if m.Counting("flannel*").Counts("flanneld") {
		t.Error("a process name was read as a glob")
	}
}

// The excluded cost is no component: a figure stacking components to
// the total would otherwise stack it on top, and components.yaml may not
// name one after it.
func TestExcludedIsNoComponent(t *testing.T) {
	for _, u := range Units {
		if c, _, ok := ComponentOf(ExcludedMetric(u)); ok {
			t.Errorf("ComponentOf(%s) = %q, a component", ExcludedMetric(u), c)
		}
	}
	for _, name := range []string{Excluded, "total"} {
		if _, err := ParseMap([]byte("components:\n  - name: " + name + "\n    symbols: [\"x_*\"]\n")); err == nil {
			t.Errorf("a component named %s accepted", name)
		}
	}
}

// The recorder counts the processes it is given (Recorder.Commands): the
// local engine's and a cluster node's agent's alike.
func TestRecorderCountsDatapathProcesses(t *testing.T) {
	log := withFakePerf(t)
	t.Setenv("CNIBENCH_FAKE_PERF_EXTRA", "5;flanneld;[k] udp_sendmsg")
	r := loRecorder(t, log)
	r.Commands = []string{"flanneld"}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := r.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	period := float64(CPUClock.Period)
	if res.Breakdown.Total != 15*period || res.Breakdown.ByComponent["tcp_udp"] != 5*period || res.Breakdown.Excluded != 0 {
		t.Errorf("breakdown %+v: want flanneld's 5 samples in tcp_udp and the total", res.Breakdown)
	}
	if _, ok := res.Metrics[ExcludedMetric(UnitNs)]; !ok {
		t.Errorf("metrics %v: no %s", res.Metrics, ExcludedMetric(UnitNs))
	}
}
