package cpp

import (
	"math"
	"os/exec"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	for sym, want := range map[string]string{
		"vxlan_xmit": "vxlan", "vxlan_rcv": "vxlan", "udp_tunnel_xmit_skb": "vxlan",
		"br_handle_frame": "bridge", "br_forward": "bridge", "veth_xmit": "veth",
		"fib_table_lookup": "fib", "ip_forward": "ip_forward", "nf_hook_slow": "netfilter",
		"nft_do_chain": "netfilter", "ipt_do_table": "netfilter", "bpf_prog_abc_handle": "ebpf",
		"skb_segment": "gso_gro", "dev_gro_receive": "gso_gro", "tcp_sendmsg_locked": "tcp_udp",
		"udp_sendmsg": "tcp_udp", "copy_user_enhanced_fast_string": "copy", "_copy_to_iter": "copy",
		"pv_native_safe_halt": "idle", "ovs_vport_receive": "ovs", "geneve_xmit": "geneve",
		"ipip_tunnel_xmit": "ipip", "gre_rcv": "gre", "schedule": "other", "main": "other",
		"ip_rcv": "ip_stack", "__netif_receive_skb_core": "ip_stack", "skb_copy_datagram_iter": "copy", "ip_route_input_noref": "fib",
	} {
		if got := m.Classify(sym); got != want {
			t.Errorf("%s -> %s, want %s", sym, got, want)
		}
	}
	if !m.Counts("ksoftirqd/1") || !m.Counts("iperf3") || !m.Counts("swapper/0") || m.Counts("go") {
		t.Error("command filter")
	}
}

func TestAttributeAddsUp(t *testing.T) {
	m, _ := DefaultMap()
	out := []byte(`# comment
     10;iperf3         ;[k] tcp_sendmsg_locked
      5;iperf3         ;[k] copy_user_enhanced_fast_string
      7;ksoftirqd/0    ;[k] vxlan_rcv
      3;swapper/1      ;[k] br_handle_frame
     40;swapper/1      ;[k] pv_native_safe_halt
      2;swapper/1      ;[k] veth_xmit
      9;compile        ;[k] __handle_mm_fault
      1;iperf3         ;[.] 0x0000000000012345
`)
	p, err := ParseReport(out)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Attribute(p, 1000, UnitNs)
	if b.Total != 28000 || b.Idle != 40000 || b.Excluded != 9000 {
		t.Errorf("total %v idle %v excluded %v", b.Total, b.Idle, b.Excluded)
	}
	sum := 0.0
	for _, v := range b.ByComponent {
		sum += v
	}
	if sum != b.Total {
		t.Errorf("components add to %v, total %v", sum, b.Total)
	}
	pp := b.PerPacket(7)
	if math.Abs(pp[MetricTotal]-4000) > 1e-9 || pp[MetricName("vxlan")] != 1000 || pp[MetricName("other")] != 1000/7.0 {
		t.Errorf("per packet %v", pp)
	}
	if c, u, ok := ComponentOf(MetricName("veth")); !ok || c != "veth" || u != UnitNs {
		t.Error("Component")
	}
	if _, _, ok := ComponentOf(MetricTotal); ok {
		t.Error("total is not a component")
	}
	// The same samples counted in cycles: metrics say so.
	bc := m.Attribute(p, 2000, UnitCycles)
	pc := bc.PerPacket(7)
	if math.Abs(pc[MetricTotalCycles]-8000) > 1e-9 || pc[MetricFor("vxlan", UnitCycles)] != 2000 {
		t.Errorf("per packet in cycles %v", pc)
	}
	if _, ok := pc[MetricTotal]; ok {
		t.Error("cycles breakdown has ns metrics")
	}
	if c, u, ok := ComponentOf(MetricFor("vxlan", UnitCycles)); !ok || c != "vxlan" || u != UnitCycles {
		t.Errorf("ComponentOf cycles metric: %q %q %v", c, u, ok)
	}
	if _, _, ok := ComponentOf(MetricTotalCycles); ok {
		t.Error("cycles total is not a component")
	}
}

// HasCycles must agree with perf: where it says yes, perf stat counts
// cycles system-wide; where no, perf reports the event unsupported.
func TestHasCyclesAgreesWithPerf(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	out, err := exec.Command("perf", "stat", "-a", "-x", ",", "-e", "cycles", "--", "sleep", "0.1").CombinedOutput()
	if err != nil {
		t.Skipf("skipped: perf stat failed: %v: %s", err, out)
	}
	counted := !strings.Contains(string(out), "<not supported>") && !strings.Contains(string(out), "<not counted>")
	if HasCycles() != counted {
		t.Errorf("HasCycles = %v, perf stat: %s", HasCycles(), out)
	}
}

func TestParseReportRejectsGarbage(t *testing.T) {
	if _, err := ParseReport([]byte("nonsense line")); err == nil {
		t.Error("accepted")
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte("  10;iperf3 ;[k] tcp_sendmsg\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseReport(b)
		if err == nil {
			for _, n := range p.Samples {
				if n < 0 || math.IsNaN(n) {
					t.Errorf("bad count %v", n)
				}
			}
		}
	})
}
