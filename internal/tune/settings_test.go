package tune

import (
	"encoding/json"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// What a tuning set is recorded by place, knob and value, with the
// devices written and the values found: on an emulated node the RFS
// table and a global sysctl are the host's; a value that already held
// is listed though it was left alone; the kernel's tabs become spaces.
func TestSettings(t *testing.T) {
	const busy, rmem = "/proc/sys/net/core/busy_read", "/proc/sys/net/ipv4/tcp_rmem"
	f, tgt := fixture()
	tgt.NodeNetns = nodeNS
	f.vals[key("", FSProc, busy)] = "50" // already as the tuning wants
	for _, ns := range []string{nodeNS, pod0NS, pod1NS} {
		f.vals[key(ns, FSProc, rmem)] = "4096\t131072\t33554432"
	}
	f.vals[key(nodeNS, FSSysfs, "class/net/eth1/queues/rx-1/rps_cpus")] = "1"
	tu := study.Tuning{Name: "all", RPS: &study.RPS{CPUs: "0-1"}, RFS: &study.RFS{SockFlowEntries: 4096, FlowCnt: 256}, Pods: true,
		Sysctls: map[string]string{"net.core.busy_read": "50", "net.ipv4.tcp_rmem": "4096 131072 6291456"}}
	a, err := Apply(openJournal(t), f, tu, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Revert()
	node := []string{"cali0", "cali1", "eth1", "vxlan.calico"}
	want := []results.TuningSetting{
		{Where: results.WhereHost, Knob: "net.core.busy_read", Value: "50", Found: []string{"50"}, Unchanged: true},
		{Where: results.WhereHost, Knob: "net.core.rps_sock_flow_entries", Value: "4096", Found: []string{"0"}},
		{Where: results.WhereNode, Knob: "net.ipv4.tcp_rmem", Value: "4096 131072 6291456", Found: []string{"4096 131072 33554432"}},
		{Where: results.WhereNode, Knob: "rps_cpus", Value: "00000003", Devices: node, Found: []string{"0", "1"}},
		{Where: results.WhereNode, Knob: "rps_flow_cnt", Value: "256", Devices: node, Found: []string{"0"}},
		{Where: results.WherePods, Knob: "net.ipv4.tcp_rmem", Value: "4096 131072 6291456", Found: []string{"4096 131072 33554432"}},
		{Where: results.WherePods, Knob: "rps_cpus", Value: "00000003", Devices: []string{"eth0"}, Found: []string{"0"}},
		{Where: results.WherePods, Knob: "rps_flow_cnt", Value: "256", Devices: []string{"eth0"}, Found: []string{"0"}},
	}
	same(t, a.Settings(tgt), want)

	// On a cluster node (no namespace of its own) everything outside the
	// pods is the node's.
	f, tgt = fixture()
	a, err = Apply(openJournal(t), f, study.Tuning{Name: "rfs", RFS: &study.RFS{SockFlowEntries: 4096, FlowCnt: 256}}, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Revert()
	for _, s := range a.Settings(tgt) {
		if s.Where != results.WhereNode {
			t.Errorf("%s went to %q on a cluster node, want %q", s.Knob, s.Where, results.WhereNode)
		}
	}
	// The client end names its node and pods so (knob's tuningTarget).
	tgt.NodeWhere, tgt.PodsWhere = results.WhereClientNode, results.WhereClientPods
	client := study.Tuning{Name: "rps", RPS: &study.RPS{CPUs: "0"}, Pods: true}
	if a, err = Apply(openJournal(t), f, client, tgt); err != nil {
		t.Fatal(err)
	}
	defer a.Revert()
	for _, s := range a.Settings(tgt) {
		if want := map[bool]string{false: results.WhereClientNode, true: results.WhereClientPods}[s.Devices[0] == "eth0"]; s.Where != want {
			t.Errorf("client end: %s of %v went to %q, want %q", s.Knob, s.Devices, s.Where, want)
		}
	}
	if (*Applied)(nil).Settings(tgt) != nil {
		t.Error("a baseline (nil Applied) set something")
	}
}

func same(t *testing.T, got, want []results.TuningSetting) {
	t.Helper()
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	if string(g) != string(w) {
		t.Errorf("settings:\n%s\nwant:\n%s", g, w)
	}
}
