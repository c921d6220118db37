package tune

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

const (
	nodeNS = "cnb-r-node"
	pod0NS = "cnb-r-pod0"
	pod1NS = "cnb-r-pod1"
)

// fixture is a server node like the paper's: underlay eth1 (two queues),
// vxlan.calico and one cali veth per pod, and two pods, on 4 CPUs.
func fixture() (*fakeFS, Target) {
	f := newFake()
	f.vals[key("", FSProc, SockFlowEntriesPath)] = "0"
	f.addDev(nodeNS, "eth1", 2)
	f.addDev(nodeNS, "vxlan.calico", 1)
	f.addDev(nodeNS, "cali0", 1)
	f.addDev(nodeNS, "cali1", 1)
	f.addDev(pod0NS, "eth0", 1)
	f.addDev(pod1NS, "eth0", 1)
	return f, Target{
		NodeIfaces:  []netns.Iface{{Netns: nodeNS, Name: "eth1"}, {Netns: nodeNS, Name: "vxlan.calico"}, {Netns: nodeNS, Name: "cali0"}, {Netns: nodeNS, Name: "cali1"}},
		PodIfaces:   []netns.Iface{{Netns: pod0NS, Name: "eth0"}, {Netns: pod1NS, Name: "eth0"}},
		CPUs:        cpuset.Range(4),
		SoftIRQCore: -1,
	}
}

// queueWrites lists, for each queue, rps_cpus=mask and (if flow != "")
// rps_flow_cnt=flow, in Plan's order.
func queueWrites(mask, flow string, pods bool) []string {
	devs := [][3]string{{nodeNS, "eth1", "0"}, {nodeNS, "eth1", "1"}, {nodeNS, "vxlan.calico", "0"}, {nodeNS, "cali0", "0"}, {nodeNS, "cali1", "0"}}
	if pods {
		devs = append(devs, [3]string{pod0NS, "eth0", "0"}, [3]string{pod1NS, "eth0", "0"})
	}
	var out []string
	for _, d := range devs {
		q := "class/net/" + d[1] + "/queues/rx-" + d[2]
		if mask != "" {
			out = append(out, Change{Netns: d[0], FS: FSSysfs, Path: q + "/rps_cpus", Value: mask}.String())
		}
		if flow != "" {
			out = append(out, Change{Netns: d[0], FS: FSSysfs, Path: q + "/rps_flow_cnt", Value: flow}.String())
		}
	}
	return out
}

func builtin(t testing.TB, name string) study.Tuning {
	t.Helper()
	tu, ok := study.BuiltinTuning(name)
	if !ok {
		t.Fatalf("no built-in tuning %s", name)
	}
	return tu
}

func TestPlan(t *testing.T) {
	global := Change{FS: FSProc, Path: SockFlowEntriesPath, Value: "32768"}.String()
	tests := []struct {
		tuning study.Tuning
		want   []string
	}{
		{builtin(t, "baseline"), nil},
		{builtin(t, "rps"), queueWrites("0000000f", "", false)},
		{builtin(t, "rps+"), queueWrites("0000000f", "", true)},
		{builtin(t, "rfs"), append([]string{global}, queueWrites("0000000f", "32768", false)...)},
		{builtin(t, "rfs+"), append([]string{global}, queueWrites("0000000f", "32768", true)...)},
		{builtin(t, "rps-7"), queueWrites("00000007", "", false)},
		{study.Tuning{Name: "cpu0", RPS: &study.RPS{CPUs: "0"}, Pods: true}, queueWrites("00000001", "", true)},
		{study.Tuning{Name: "rfs-only", RFS: &study.RFS{SockFlowEntries: 0, FlowCnt: 4096}}, append([]string{Change{FS: FSProc, Path: SockFlowEntriesPath, Value: "0"}.String()}, queueWrites("", "4096", false)...)},
	}
	for _, tt := range tests {
		t.Run(tt.tuning.Name, func(t *testing.T) {
			f, tgt := fixture()
			plan, err := Plan(tt.tuning, tgt, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range plan {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if len(f.writes) != 0 {
				t.Errorf("Plan wrote %v", f.writes)
			}
		})
	}
}

// A tuning's sysctls go where the kernel keeps them: a global one (the
// node's namespace lacks it) once on the host, a per-namespace one in the
// node's namespace and, with pods, in each pod's; on a real node (node
// namespace "") a pod's namespace tells which it is. Apply reads each
// back by meaning (tabs for spaces) and Revert restores every value.
func TestSysctls(t *testing.T) {
	const busy, rmem = "/proc/sys/net/core/busy_read", "/proc/sys/net/ipv4/tcp_rmem"
	tu := study.Tuning{Name: "busy", Sysctls: map[string]string{"net.core.busy_read": "50", "net.ipv4.tcp_rmem": "4096 131072 6291456"}}
	setup := func(node string) (*fakeFS, Target) {
		f, tgt := fixture()
		tgt.NodeNetns = node
		f.vals[key("", FSProc, busy)] = "0"
		for _, ns := range []string{node, pod0NS, pod1NS} {
			f.vals[key(ns, FSProc, rmem)] = "4096\t131072\t6291456"
		}
		return f, tgt
	}
	for _, tc := range []struct {
		name, node string
		pods       bool
		want       []string
	}{
		{"emulated node", nodeNS, false, []string{"host proc:" + busy + "=50", nodeNS + " proc:" + rmem + "=4096 131072 6291456"}},
		{"emulated node and pods", nodeNS, true, []string{"host proc:" + busy + "=50", nodeNS + " proc:" + rmem + "=4096 131072 6291456",
			pod0NS + " proc:" + rmem + "=4096 131072 6291456", pod1NS + " proc:" + rmem + "=4096 131072 6291456"}},
		{"real node and pods", "", true, []string{"host proc:" + busy + "=50", "host proc:" + rmem + "=4096 131072 6291456",
			pod0NS + " proc:" + rmem + "=4096 131072 6291456", pod1NS + " proc:" + rmem + "=4096 131072 6291456"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, tgt := setup(tc.node)
			tu.Pods = tc.pods
			plan, err := Plan(tu, tgt, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range plan {
				if c.FS == FSProc {
					got = append(got, c.String())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sysctl writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// Applied and reverted: the values written are read back by meaning
	// (the fake keeps the text as written, the kernel prints tabs).
	f, tgt := setup(nodeNS)
	f.vals[key(nodeNS, FSProc, rmem)] = "4096\t87380\t6291456"
	before := f.snapshot()
	j := openJournal(t)
	tu.Pods = false
	a, err := Apply(j, f, tu, tgt)
	if err != nil {
		t.Fatal(err)
	}
	if f.get("", FSProc, busy) != "50" || f.get(nodeNS, FSProc, rmem) != "4096 131072 6291456" {
		t.Fatalf("not applied: %v", f.snapshot())
	}
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	if got := f.snapshot(); !maps.Equal(got, before) {
		t.Fatalf("after revert:\n%v\nwant:\n%v", got, before)
	}
	// A failure to look is the plan's error, naming the sysctl.
	f.gone[nodeNS] = true
	if _, err := Plan(tu, tgt, f); err == nil || !strings.Contains(err.Error(), "sysctl net.core.busy_read") {
		t.Errorf("node namespace gone: %v", err)
	}
}

// TestSysctlOfADeviceNotPlanned: a device's own sysctl is never planned.
// The node's namespace has no eth0, so it read as a global sysctl and
// the plan wrote the host's own uplink (validation refuses the name; the
// plan refuses it too, whatever reaches it). all and default are planned
// as before.
func TestSysctlOfADeviceNotPlanned(t *testing.T) {
	f, tgt := fixture()
	tgt.NodeNetns = nodeNS
	const dev, all = "/proc/sys/net/ipv4/conf/eth0/rp_filter", "/proc/sys/net/ipv4/conf/all/rp_filter"
	f.vals[key("", FSProc, dev)] = "1"
	f.vals[key(nodeNS, FSProc, all)] = "1"
	plan, err := Plan(study.Tuning{Name: "rp", Sysctls: map[string]string{"net.ipv4.conf.eth0.rp_filter": "0"}}, tgt, f)
	if !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), "net.ipv4.conf.eth0.rp_filter") {
		t.Errorf("Plan of a device's sysctl = %v, %v; want ErrBadPath naming it", plan, err)
	}
	plan, err = Plan(study.Tuning{Name: "rp", Sysctls: map[string]string{"net.ipv4.conf.all.rp_filter": "0"}}, tgt, f)
	if err != nil || len(plan) != 1 || plan[0].Netns != nodeNS || plan[0].Path != all {
		t.Errorf("Plan of conf.all = %v, %v; want one write in the node's namespace", plan, err)
	}
	// A tree of device sysctls the name rule does not list (a future
	// protocol's, say): the node lacks it, so it would be global, but a
	// segment names the host's device.
	f.vals[key("", FSSysfs, "class/net/hostnic/mtu")] = "1500"
	f.vals[key("", FSProc, "/proc/sys/net/newproto/hostnic/mode")] = "0"
	plan, err = Plan(study.Tuning{Name: "np", Sysctls: map[string]string{"net.newproto.hostnic.mode": "1"}}, tgt, f)
	if !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), "host's device hostnic") {
		t.Errorf("Plan of a global-looking sysctl naming a host device = %v, %v; want ErrBadPath naming it", plan, err)
	}
	// And one the rule lists: AX.25's are the initial namespace's only.
	f.vals[key("", FSProc, "/proc/sys/net/ax25/ax0/ip_default_mode")] = "0"
	if plan, err = Plan(study.Tuning{Name: "ax", Sysctls: map[string]string{"net.ax25.ax0.ip_default_mode": "1"}}, tgt, f); !errors.Is(err, ErrBadPath) {
		t.Errorf("Plan of an AX.25 device's sysctl = %v, %v; want ErrBadPath", plan, err)
	}
}

// The sysctls a study's tunings set are recorded as found, where the
// tunings write them: a global one on the host, a per-namespace one in
// the node's namespace; one that cannot be read says why.
func TestSysctlSnapshot(t *testing.T) {
	f, _ := fixture()
	f.vals[key("", FSProc, "/proc/sys/net/core/busy_read")] = "0"
	f.vals[key("", FSProc, "/proc/sys/net/core/somaxconn")] = "4096"
	f.vals[key(nodeNS, FSProc, "/proc/sys/net/core/somaxconn")] = "128"
	got := SysctlSnapshot(f, nodeNS, []string{"net.core.busy_read", "net.core.somaxconn", "net.core.nope"})
	if got["net.core.busy_read"] != "0" || got["net.core.somaxconn"] != "128" || !strings.HasPrefix(got["net.core.nope"], "error: ") {
		t.Errorf("snapshot %v", got)
	}
	if len(f.writes) != 0 {
		t.Errorf("a snapshot wrote %v", f.writes)
	}
}

func TestPlanSoftIRQCore(t *testing.T) {
	f, tgt := fixture()
	tgt.SoftIRQCore = 1
	plan, err := Plan(builtin(t, "rps-7"), tgt, f)
	if err != nil {
		t.Fatal(err)
	}
	if plan[0].Value != "0000000d" {
		t.Fatalf("mask without core 1 = %s, want 0000000d", plan[0].Value)
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name   string
		tuning study.Tuning
		edit   func(*Target)
		want   string
	}{
		{"cpu outside", study.Tuning{RPS: &study.RPS{CPUs: "2-4"}}, nil, "CPU 4 is not one of"},
		{"bad list", study.Tuning{RPS: &study.RPS{CPUs: "x"}}, nil, "bad CPU"},
		{"no cpus", builtin(t, "rps"), func(tg *Target) { tg.CPUs = nil }, "no CPUs"},
		{"single cpu", builtin(t, "rps-7"), func(tg *Target) { tg.CPUs = cpuset.Set{2} }, "none is left"},
		{"softirq core outside", builtin(t, "rps-7"), func(tg *Target) { tg.SoftIRQCore = 9 }, "softirq core 9"},
		{"not pow2", study.Tuning{RFS: &study.RFS{SockFlowEntries: 30000, FlowCnt: 32768}}, nil, "kernel would use 32768"},
		{"negative", study.Tuning{RFS: &study.RFS{SockFlowEntries: 1, FlowCnt: -1}}, nil, "negative"},
		{"missing device", builtin(t, "rps"), func(tg *Target) { tg.NodeIfaces = append(tg.NodeIfaces, netns.Iface{Netns: nodeNS, Name: "nope"}) }, "nope in cnb-r-node"},
		{"bad device name", builtin(t, "rps"), func(tg *Target) { tg.NodeIfaces = []netns.Iface{{Name: "../x"}} }, "bad tuning path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, tgt := fixture()
			if tt.edit != nil {
				tt.edit(&tgt)
			}
			_, err := Plan(tt.tuning, tgt, f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Plan error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func openJournal(t testing.TB) *journal.Journal {
	t.Helper()
	j, err := journal.Open(t.TempDir(), "t", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func TestApplyRevert(t *testing.T) {
	f, tgt := fixture()
	// Already what rfs+ wants: left alone, not journaled.
	f.vals[key(pod1NS, FSSysfs, "class/net/eth0/queues/rx-0/rps_flow_cnt")] = "32768"
	before := f.snapshot()
	j := openJournal(t)

	a, err := Apply(j, f, builtin(t, "rfs+"), tgt)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{Change{FS: FSProc, Path: SockFlowEntriesPath, Value: "32768"}.String()}, queueWrites("f", "32768", true)...)
	want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, pod1NS) && strings.Contains(s, "rps_flow_cnt") })
	if !slices.Equal(f.writes, want) {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(f.writes, "\n"), strings.Join(want, "\n"))
	}
	if j.Pending() != len(want) {
		t.Fatalf("journal pending %d, want %d", j.Pending(), len(want))
	}
	if f.get("", FSProc, SockFlowEntriesPath) != "32768" || f.get(pod0NS, FSSysfs, "class/net/eth0/queues/rx-0/rps_cpus") != "f" {
		t.Fatal("values not applied")
	}

	f.writes = nil
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	if got := f.snapshot(); !maps.Equal(got, before) {
		t.Fatalf("after revert:\n%v\nwant:\n%v", got, before)
	}
	// Reverse order: the first write is undone last.
	if len(f.writes) != len(want) || !strings.Contains(f.writes[len(f.writes)-1], SockFlowEntriesPath) ||
		!strings.HasPrefix(f.writes[0], pod1NS) {
		t.Fatalf("revert order:\n%s", strings.Join(f.writes, "\n"))
	}
	if j.Pending() != 0 {
		t.Fatalf("journal pending %d after revert", j.Pending())
	}
	f.writes = nil
	if err := a.Revert(); err != nil || len(f.writes) != 0 {
		t.Fatalf("second Revert = %v, wrote %v", err, f.writes)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

func TestApplyFailureRollsBack(t *testing.T) {
	f, tgt := fixture()
	before := f.snapshot()
	boom := errors.New("boom")
	f.failAt["class/net/cali0/queues/rx-0/rps_flow_cnt"] = boom
	j := openJournal(t)
	a, err := Apply(j, f, builtin(t, "rfs+"), tgt)
	if !errors.Is(err, boom) || a != nil {
		t.Fatalf("Apply = %v, %v; want boom", a, err)
	}
	if got := f.snapshot(); !maps.Equal(got, before) {
		t.Fatalf("not rolled back:\n%v\nwant:\n%v", got, before)
	}
	if j.Pending() != 0 {
		t.Fatalf("journal pending %d", j.Pending())
	}
}

func TestApplyMismatchRollsBack(t *testing.T) {
	f, tgt := fixture()
	before := f.snapshot()
	f.round["class/net/vxlan.calico/queues/rx-0/rps_cpus"] = true
	j := openJournal(t)
	_, err := Apply(j, f, builtin(t, "rps"), tgt)
	var me *MismatchError
	if !errors.As(err, &me) || me.Got != "f0" {
		t.Fatalf("Apply = %v, want MismatchError", err)
	}
	if got := f.snapshot(); !maps.Equal(got, before) {
		t.Fatalf("not rolled back:\n%v\nwant:\n%v", got, before)
	}
}

func TestRevertGoneNamespace(t *testing.T) {
	f, tgt := fixture()
	j := openJournal(t)
	a, err := Apply(j, f, builtin(t, "rps+"), tgt)
	if err != nil {
		t.Fatal(err)
	}
	f.gone[pod0NS] = true
	boom := errors.New("boom")
	f.failAt["class/net/cali1/queues/rx-0/rps_cpus"] = boom
	if err := a.Revert(); !errors.Is(err, boom) {
		t.Fatalf("Revert = %v, want boom", err)
	}
	if j.Pending() != 1 {
		t.Fatalf("pending %d, want the failed one", j.Pending())
	}
	f.writes = nil
	if err := a.Revert(); err != nil || j.Pending() != 0 || len(f.writes) != 1 {
		t.Fatalf("retry Revert = %v, pending %d, writes %v", err, j.Pending(), f.writes)
	}
	if v := f.get(nodeNS, FSSysfs, "class/net/cali1/queues/rx-0/rps_cpus"); v != "0" {
		t.Fatalf("cali1 = %q", v)
	}
}

func TestApplyNeedsJournal(t *testing.T) {
	f, tgt := fixture()
	if _, err := Apply(nil, f, builtin(t, "rps"), tgt); err == nil {
		t.Fatal("Apply without journal succeeded")
	}
	var a *Applied
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
}

// TestRevertReplay plays the crash path: the journal is read back from
// disk and undone without the Applied that wrote it.
func TestRevertReplay(t *testing.T) {
	f, tgt := fixture()
	before := f.snapshot()
	j := openJournal(t)
	if _, err := Apply(j, f, builtin(t, "rfs"), tgt); err != nil {
		t.Fatal(err)
	}
	// After the crash someone else set cali0's mask.
	other := "class/net/cali0/queues/rx-0/rps_cpus"
	f.vals[key(nodeNS, FSSysfs, other)] = "2"
	r, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	dry, err := RevertReplayOutcomes(r, f, true)
	if err != nil || len(dry) != 1+len(queueWrites("f", "32768", false)) {
		t.Fatalf("dry run = %d outcomes, %v", len(dry), err)
	}
	if f.get("", FSProc, SockFlowEntriesPath) != "32768" {
		t.Fatal("dry run wrote")
	}
	outs, err := RevertReplayOutcomes(r, f, false)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, o := range outs {
		counts[o.Action]++
	}
	if counts[Changed] != 1 || counts[Restored] != len(outs)-1 || outs[len(outs)-1].Set.Path != SockFlowEntriesPath {
		t.Fatalf("outcomes %v", outs)
	}
	want := maps.Clone(before)
	want[key(nodeNS, FSSysfs, other)] = "2"
	if got := f.snapshot(); !maps.Equal(got, want) {
		t.Fatalf("after replay:\n%v\nwant:\n%v", got, want)
	}
	// Replaying again finds everything in place.
	f.gone[nodeNS] = true
	outs, err = RevertReplayOutcomes(r, f, false)
	if err != nil || outs[0].Action != Gone || outs[len(outs)-1].Action != Already {
		t.Fatalf("second replay = %v, %v", outs, err)
	}
}

func TestSnapshot(t *testing.T) {
	f, tgt := fixture()
	f.vals[key(pod0NS, FSSysfs, "class/net/eth0/queues/rx-0/rps_cpus")] = "3"
	ifaces := append(tgt.NodeIfaces[:1:1], tgt.PodIfaces[0], netns.Iface{Netns: "gone", Name: "x"})
	got := Snapshot(f, ifaces)
	want := map[string]string{
		"net.core.rps_sock_flow_entries":   "0",
		nodeNS + "/eth1/rx-0/rps_cpus":     "0",
		nodeNS + "/eth1/rx-0/rps_flow_cnt": "0",
		nodeNS + "/eth1/rx-1/rps_cpus":     "0",
		nodeNS + "/eth1/rx-1/rps_flow_cnt": "0",
		pod0NS + "/eth0/rx-0/rps_cpus":     "3",
		pod0NS + "/eth0/rx-0/rps_flow_cnt": "0",
	}
	e := got["gone/x"]
	delete(got, "gone/x")
	if !maps.Equal(got, want) || !strings.HasPrefix(e, "error: ") {
		t.Fatalf("Snapshot = %v (gone/x %q)", got, e)
	}
}

func TestEqual(t *testing.T) {
	for _, tt := range []struct {
		path, a, b string
		want       bool
	}{
		{"q/rps_cpus", "3", "00000003", true},
		{"q/rps_cpus", "0", "00000000,00000000", true},
		{"q/rps_cpus", "1,00000000", "00000001,00000000\n", true},
		{"q/rps_cpus", "3", "7", false},
		{"q/rps_flow_cnt", "32768\n", "32768", true},
		{"q/rps_flow_cnt", "0", "32768", false},
		{SockFlowEntriesPath, "032768", "32768", true},
		{"x", "abc", "abd", false},
		{"/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n", "4096 131072 6291456", true},
		{"/proc/sys/net/ipv4/tcp_rmem", "4096\t131072", "4096 131072 6291456", false},
		{"/proc/sys/net/ipv4/tcp_congestion_control", "cubic", "bbr", false},
		// Mask-valued sysctls read back padded and grouped: a tuning
		// {net.core.rps_default_mask: f} failed with a MismatchError.
		{"/proc/sys/net/core/rps_default_mask", "f", "00000000,0000000f", true},
		{"/proc/sys/net/core/flow_limit_cpu_bitmap", "3", "00000003\n", true},
		{"/proc/sys/net/core/flow_limit_cpu_bitmap", "3", "00000007", false},
		{"q/xps_cpus", "1", "00000001", true},
	} {
		if got := Equal(tt.path, tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%s, %q, %q) = %v", tt.path, tt.a, tt.b, got)
		}
	}
}

func ExampleChange_String() {
	fmt.Println(Change{Netns: "cnb-r-pod0", FS: FSSysfs, Path: "class/net/eth0/queues/rx-0/rps_cpus", Value: "0000000f"})
	// Output: cnb-r-pod0 sysfs:class/net/eth0/queues/rx-0/rps_cpus=0000000f
}
