package cpp

import (
	"math"
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
	b := m.Attribute(p, 1000)
	if b.TotalNs != 28000 || b.IdleNs != 40000 || b.ExcludedNs != 9000 {
		t.Errorf("total %v idle %v excluded %v", b.TotalNs, b.IdleNs, b.ExcludedNs)
	}
	sum := 0.0
	for _, v := range b.NsByComponent {
		sum += v
	}
	if sum != b.TotalNs {
		t.Errorf("components add to %v, total %v", sum, b.TotalNs)
	}
	pp := b.PerPacket(7)
	if math.Abs(pp[MetricTotal]-4000) > 1e-9 || pp[MetricName("vxlan")] != 1000 || pp[MetricName("other")] != 1000/7.0 {
		t.Errorf("per packet %v", pp)
	}
	if c, ok := ComponentOf(MetricName("veth")); !ok || c != "veth" {
		t.Error("Component")
	}
	if _, ok := ComponentOf(MetricTotal); ok {
		t.Error("total is not a component")
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
