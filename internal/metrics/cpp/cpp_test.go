package cpp

import (
	"math"
	"slices"
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
		"ipip_tunnel_xmit": "ipip", "iptunnel_xmit": "tunnel-core", "gre_rcv": "gre", "schedule": "other", "main": "other",
		"ip_rcv": "ip_stack", "__netif_receive_skb_core": "ip_stack", "skb_copy_datagram_iter": "copy", "ip_route_input_noref": "fib",
	} {
		if got := m.Classify(sym); got != want {
			t.Errorf("%s -> %s, want %s", sym, got, want)
		}
	}
	// GRO and GSO globs are anchored at underscores: "gro" inside
	// "cgroup" or "grow" is not receive offload.
	for sym, want := range map[string]string{
		"mem_cgroup_charge_skmem": "other", "mem_cgroup_uncharge_skmem": "other", "cgroup_rstat_updated": "other",
		"__cgroup_account_cputime": "other", "obj_cgroup_charge": "other", "tcp_grow_window": "tcp_udp",
		"__cgroup_bpf_run_filter_skb": "ebpf", "__cgroup_bpf_run_filter_sock_addr": "ebpf",
		"napi_gro_receive": "gso_gro", "gro_normal_list": "gso_gro", "__gro_flush": "gso_gro", "gro_cells_receive": "gso_gro",
		"inet_gro_receive": "gso_gro", "tcp4_gro_receive": "gso_gro", "tcp_gro_receive": "gso_gro", "udp4_gro_complete": "gso_gro",
		"skb_gro_receive": "gso_gro", "tcp_gro_receive.isra.0": "gso_gro", "__skb_gso_segment": "gso_gro", "tcp4_gso_segment": "gso_gro",
		"inet_gso_segment": "gso_gro", "skb_gso_validate_network_len": "gso_gro",
		"skb_udp_tunnel_segment": "gso_gro", "__skb_udp_tunnel_segment": "gso_gro",
		// ip_tunnel.c is shared by IP-in-IP and GRE (__gre_xmit ->
		// ip_tunnel_xmit, ipgre_rcv -> ip_tunnel_rcv): neither overlay's.
		"ip_tunnel_xmit": "tunnel-core", "ip_tunnel_rcv": "tunnel-core", "ip_tunnel_lookup": "tunnel-core",
		"ip_md_tunnel_xmit": "tunnel-core", "ipip_rcv": "ipip", "ipip6_rcv": "ipip", "__gre_xmit": "gre", "ipgre_rcv": "gre",
	} {
		if got := m.Classify(sym); got != want {
			t.Errorf("%s -> %s, want %s", sym, got, want)
		}
	}
	// Wake-up placement and load balancing look for idle CPUs from busy
	// ones: that time is spent, not idle.
	for _, sym := range []string{"select_idle_sibling", "select_idle_cpu", "select_idle_core", "select_idle_smt",
		"available_idle_cpu", "idle_cpu", "sched_idle_cpu", "find_idlest_cpu", "find_idlest_group",
		"newidle_balance", "sched_balance_newidle", "_nohz_idle_balance", "nohz_run_idle_balance"} {
		if got := m.Classify(sym); got != Other {
			t.Errorf("%s -> %s, want %s", sym, got, Other)
		}
	}
	for _, sym := range []string{"do_idle", "cpuidle_enter_state", "default_idle_call", "intel_idle", "acpi_idle_do_entry", "poll_idle"} {
		if got := m.Classify(sym); got != Idle {
			t.Errorf("%s -> %s, want %s", sym, got, Idle)
		}
	}
	if n := m.Names(); slices.Index(n, Other) != len(n)-1 || slices.Contains(n, Idle) {
		t.Errorf("names %v: want other once, last, and no idle", n)
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
	pp := b.PerPacket(7, UnitNs)
	if math.Abs(pp[MetricTotal]-4000) > 1e-9 || pp[MetricName("vxlan", UnitNs)] != 1000 || pp[MetricName("other", UnitNs)] != 1000/7.0 {
		t.Errorf("per packet %v", pp)
	}
	// The same samples in cycles: same numbers, other names, none of the
	// ns names.
	pc := b.PerPacket(7, UnitCycles)
	if pc[MetricTotalCycles] != pp[MetricTotal] || pc["cpp_vxlan_cycles"] != 1000 {
		t.Errorf("per packet in cycles %v", pc)
	}
	if _, ok := pc[MetricTotal]; ok {
		t.Errorf("cycles reported under the ns name: %v", pc)
	}
}

// A wake-up's search for an idle CPU runs on a busy one: it counts in
// the total, under other, where the *idle* rule dropped it before.
func TestWakeupPlacementCounts(t *testing.T) {
	m, _ := DefaultMap()
	p, err := ParseReport([]byte("3;sockperf;[k] select_idle_sibling\n2;swapper/0;[k] available_idle_cpu\n5;swapper/0;[k] do_idle\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := m.Attribute(p, 1)
	if b.Total != 5 || b.ByComponent[Other] != 5 || b.Idle != 5 {
		t.Errorf("total %v other %v idle %v, want 5 5 5", b.Total, b.ByComponent[Other], b.Idle)
	}
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		metric, comp, unit string
		ok                 bool
	}{
		{"cpp_veth_ns", "veth", UnitNs, true},
		{"cpp_ip_stack_cycles", "ip_stack", UnitCycles, true},
		{"cpp_gso_gro_ns", "gso_gro", UnitNs, true},
		{MetricTotal, "", "", false},
		{MetricTotalCycles, "", "", false},
		{MetricPackets, "", "", false},
		{"cpp__ns", "", "", false},
		{"rtt_mean_us", "", "", false},
	} {
		c, u, ok := ComponentOf(tc.metric)
		if c != tc.comp || u != tc.unit || ok != tc.ok {
			t.Errorf("ComponentOf(%s) = %q %q %v", tc.metric, c, u, ok)
		}
	}
	if TotalMetric(UnitNs) != MetricTotal || TotalMetric(UnitCycles) != MetricTotalCycles || MetricName("vxlan", UnitCycles) != "cpp_vxlan_cycles" {
		t.Error("names")
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

// Netfilter's per-rule matches and targets are named after their
// extension (xt_mark's mark_mt, xt_MASQUERADE's masquerade_tg, ipset's
// set_match_v4), not nf_* or xt_*: they went to other, tcp_udp (tcp_mt)
// or ebpf (xt_bpf's bpf_mt), and br_netfilter's hooks to bridge. The
// globs' neighbours in kallsyms stay where they were.
func TestClassifyNetfilterRules(t *testing.T) {
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range []string{
		"mark_mt", "mark_tg", "conntrack_mt_v3", "conntrack_mt.isra.0", "addrtype_mt_v1", "comment_mt", "multiport_mt",
		"masquerade_tg", "set_match_v4", "set_target_v3", "statistic_mt", "rpfilter_mt", "physdev_mt", "tcp_mt", "udp_mt",
		"bpf_mt", "bpf_mt_v1", "iprange_mt4", "socket_mt4_v1_v2_v3", "ecn_mt6", "connmark_tg_v2", "redirect_tg4", "reject_tg6",
		"tproxy_tg4_v1", "audit_tg.part.0", "ebt_do_table", "arpt_do_table", "ipv4_confirm", "ipv6_confirm", "ipv4_helper",
		"br_nf_pre_routing", "br_nf_forward_ip.part.0", "br_nf_post_routing", "br_nf_dev_queue_xmit",
	} {
		if got := m.Classify(sym); got != "netfilter" {
			t.Errorf("%s -> %s, want netfilter", sym, got)
		}
	}
	for sym, want := range map[string]string{
		"throtl_add_bio_tg": Other, "ipv4_confirm_neigh": "ip_stack", "br_forward": "bridge", "br_handle_frame": "bridge",
		"tcp_v4_rcv": "tcp_udp", "udp_rcv": "tcp_udp", "bpf_prog_run_pin_on_cpu": "ebpf", "tcp_mtu_probe": "tcp_udp",
		"tcp_mtup_init": "tcp_udp", "vxlan_xmit": "vxlan",
	} {
		if got := m.Classify(sym); got != want {
			t.Errorf("%s -> %s, want %s", sym, got, want)
		}
	}
}

// A pktgen sender's samples: its generator threads' work counts (its own
// functions under pktgen, the datapath's under theirs), their pacing
// spin on the clock is idle, while the same clock functions in another
// process are work; the receiver's thread counts, the rest of cnibench
// does not.
func TestPktgenSamples(t *testing.T) {
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseReport([]byte(`60;kpktgend_1;[k] ktime_get
20;kpktgend_1;[k] read_tsc
 6;kpktgend_1;[k] read_hpet
 4;kpktgend_1;[k] acpi_pm_read
 8;kpktgend_1;[k] pktgen_xmit
 2;kpktgend_1;[k] pktgen_finalize_skb
 5;kpktgend_1;[k] veth_xmit
 4;kpktgend_1;[k] udp_queue_rcv_one_skb
 3;kpktgend_1;[k] ktime_get_with_offset
 6;cnb-pktrecv;[k] udp_recvmsg
 1;cnb-pktrecv;[k] skb_copy_datagram_iter
 2;iperf3;[k] ktime_get
 7;cnibench;[k] udp_recvmsg
`))
	if err != nil {
		t.Fatal(err)
	}
	b := m.Attribute(p, 1)
	want := map[string]float64{"pktgen": 10, "veth": 5, "tcp_udp": 10, "copy": 1, Other: 5}
	for c, v := range want {
		if b.ByComponent[c] != v {
			t.Errorf("%s: %v, want %v", c, b.ByComponent[c], v)
		}
	}
	if b.Total != 31 || b.Idle != 90 || b.Excluded != 7 {
		t.Errorf("total %v idle %v excluded %v, want 31 90 7 (breakdown %v)", b.Total, b.Idle, b.Excluded, b.ByComponent)
	}
	if got := m.Classify("ktime_get"); got != Other {
		t.Errorf("ktime_get outside kpktgend -> %s, want %s", got, Other)
	}
}

// A rule's commands are globs, checked as its symbols are.
func TestParseMapCommandRules(t *testing.T) {
	m, err := ParseMap([]byte("components:\n  - {name: idle, commands: [\"gen_*\"], symbols: [clock]}\n  - {name: x, symbols: [\"x_*\"]}\ncommands: [\"gen_*\", app]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ClassifyIn("gen_0", "clock") != Idle || m.ClassifyIn("app", "clock") != Other || m.ClassifyIn("app", "x_y") != "x" {
		t.Error("a rule with commands held outside them, or not inside")
	}
	for _, bad := range []string{
		"components:\n  - {name: idle, commands: [\"[\"], symbols: [clock]}\n",
		"components: []\ncommands: [\"[\"]\n",
	} {
		if _, err := ParseMap([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
