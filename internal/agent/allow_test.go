package agent

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestCheckWritable: the agent, the node's last line of defence, refuses
// what study validation and tune.Plan refuse: a device's own sysctl
// (the node's namespace has no pod's eth0, so net.ipv4.conf.eth0.* is
// the host's own uplink), the BPF JIT's hardening, paths that are no
// sysctl's name, and an RFS table size beyond study.MaxRFSEntries or
// not a whole number. It wrote all of them.
func TestCheckWritable(t *testing.T) {
	max := strconv.Itoa(study.MaxRFSEntries)
	over := strconv.Itoa(study.MaxRFSEntries + 1)
	flowCnt := "class/net/eth1/queues/rx-0/rps_flow_cnt"
	for _, c := range []struct {
		fs, path, value string
		ok              bool
	}{
		// The knobs cnibench tunes.
		{tune.FSProc, "/proc/sys/net/core/busy_read", "50", true},
		{tune.FSProc, "/proc/sys/net/ipv4/tcp_rmem", "4096 131072 6291456", true},
		{tune.FSProc, "/proc/sys/net/ipv4/conf/all/rp_filter", "0", true},
		{tune.FSProc, "/proc/sys/net/ipv4/conf/default/rp_filter", "0", true},
		{tune.FSProc, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "0", true},
		{tune.FSProc, "/proc/sys/net/ipv4/neigh/default/gc_stale_time", "60", true},
		{tune.FSSysfs, "class/net/eth1/queues/rx-0/rps_cpus", "ff", true},
		{tune.FSSysfs, "devices/system/cpu/cpu3/power/pm_qos_resume_latency_us", "0", true},
		// RFS table sizes: whole numbers up to study's bound; 0 and the
		// read-back form (a newline) are what a revert writes.
		{tune.FSProc, tune.SockFlowEntriesPath, "32768", true},
		{tune.FSProc, tune.SockFlowEntriesPath, max, true},
		{tune.FSProc, tune.SockFlowEntriesPath, "0\n", true},
		{tune.FSProc, tune.SockFlowEntriesPath, over, false},
		{tune.FSProc, tune.SockFlowEntriesPath, "536870912", false},
		{tune.FSProc, tune.SockFlowEntriesPath, "-1", false},
		{tune.FSProc, tune.SockFlowEntriesPath, "32768 1", false},
		{tune.FSProc, tune.SockFlowEntriesPath, "0x8000", false},
		{tune.FSProc, tune.SockFlowEntriesPath, "", false},
		{tune.FSSysfs, flowCnt, "32768", true},
		{tune.FSSysfs, flowCnt, "0", true},
		{tune.FSSysfs, flowCnt, over, false},
		{tune.FSSysfs, flowCnt, "4294967295", false},
		{tune.FSSysfs, flowCnt, "1.5", false},
		// A device's own sysctl, in every tree study refuses.
		{tune.FSProc, "/proc/sys/net/ipv4/conf/eth0/rp_filter", "0", false},
		{tune.FSProc, "/proc/sys/net/ipv6/conf/ens3/disable_ipv6", "1", false},
		{tune.FSProc, "/proc/sys/net/ipv4/neigh/eth0/gc_stale_time", "1", false},
		{tune.FSProc, "/proc/sys/net/ipv6/neigh/eth0/gc_stale_time", "1", false},
		{tune.FSProc, "/proc/sys/net/mpls/conf/eth0/input", "1", false},
		{tune.FSProc, "/proc/sys/net/ax25/ax0/ip_default_mode", "1", false},
		// A device named with a dot (VLAN eth0.100): its path reads as
		// no sysctl name.
		{tune.FSProc, "/proc/sys/net/ipv4/conf/eth0.100/rp_filter", "0", false},
		// The host's BPF JIT hardening is no network tuning.
		{tune.FSProc, "/proc/sys/net/core/bpf_jit_harden", "0", false},
		{tune.FSProc, "/proc/sys/net/core/bpf_jit_enable", "1", false},
		// Outside the allowlist.
		{tune.FSProc, "/proc/sys/kernel/core_pattern", "|/x", false},
		{tune.FSProc, "/proc/sys/net/../kernel/core_pattern", "|/x", false},
		{tune.FSProc, "/proc/sys/net/", "1", false},
		{tune.FSSysfs, "/proc/sys/net/core/busy_read", "50", false},
		{tune.FSSysfs, "class/net/eth1/mtu", "9000", false},
	} {
		err := checkWritable(c.fs, c.path, c.value)
		if c.ok && err != nil {
			t.Errorf("%s %s = %q: %v; want it written", c.fs, c.path, c.value, err)
		}
		if !c.ok && (err == nil || !errors.Is(err, tune.ErrBadPath)) {
			t.Errorf("%s %s = %q: %v; want a bad-path refusal", c.fs, c.path, c.value, err)
		}
	}
}

// TestCheckWritableSaysWhy: a device's own sysctl is refused with
// study's reason, which names the .all. form to use instead.
func TestCheckWritableSaysWhy(t *testing.T) {
	err := checkWritable(tune.FSProc, "/proc/sys/net/ipv4/conf/eth0/rp_filter", "0")
	if err == nil || !strings.Contains(err.Error(), "net.ipv4.conf.all.rp_filter") {
		t.Errorf("device sysctl: %v; want study's reason naming the .all. form", err)
	}
	err = checkWritable(tune.FSSysfs, "class/net/eth1/queues/rx-0/rps_flow_cnt", "99999999")
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(study.MaxRFSEntries)) {
		t.Errorf("flow count over the bound: %v; want the bound named", err)
	}
}

// TestWriteBackOldRFSTable: a node whose operator set an RFS table
// larger than study's bound gets it back when the controller reverts
// (it writes the old value through the agent); a value that large for a
// knob the session did not change is still refused.
func TestWriteBackOldRFSTable(t *testing.T) {
	fs := testNode()
	big := strconv.Itoa(4 * study.MaxRFSEntries)
	fs.vals[key("", "proc", tune.SockFlowEntriesPath)] = big + "\n"
	c, wait := session(t, Config{Run: "rfs", Node: "w1", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir()})
	defer func() { c.Close(); wait() }()
	flowCnt := "class/net/eth1/queues/rx-0/rps_flow_cnt"
	fs.vals[key("", "sysfs", flowCnt)] = "0"
	if err := c.Write("", "proc", tune.SockFlowEntriesPath, big); !errors.Is(err, tune.ErrBadPath) {
		t.Errorf("write %s before any change: %v; want a bad-path refusal", big, err)
	}
	if err := c.Write("", "proc", tune.SockFlowEntriesPath, "32768"); err != nil {
		t.Fatal(err)
	}
	if err := c.Write("", "proc", tune.SockFlowEntriesPath, big+"\n"); err != nil {
		t.Errorf("write back the old %s: %v", big, err)
	}
	if v := fs.vals[key("", "proc", tune.SockFlowEntriesPath)]; strings.TrimSpace(v) != big {
		t.Errorf("table = %q after the revert; want %s", v, big)
	}
	if err := c.Write("", "sysfs", flowCnt, big); !errors.Is(err, tune.ErrBadPath) {
		t.Errorf("write %s to a flow count the session did not change: %v; want a bad-path refusal", big, err)
	}
}
