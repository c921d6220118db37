package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeRunner answers listing commands from a table and fails a test on
// any command that is not one of the read-only ones Inspect may run.
type fakeRunner struct {
	t     testing.TB
	out   map[string]string
	fail  map[string]string
	calls []string
}

var readOnly = []string{"ethtool -k ", "ethtool -x ", "ethtool -l ", "iptables-save -c", "nft -j list ruleset"}

func (f *fakeRunner) Run(_ context.Context, argv []string) ([]byte, error) {
	cmd := strings.Join(argv, " ")
	f.calls = append(f.calls, cmd)
	if !slices.ContainsFunc(readOnly, func(p string) bool { return strings.HasPrefix(cmd, p) }) {
		f.t.Errorf("Inspect ran %q, which is not a listing command", cmd)
	}
	if msg, ok := f.fail[cmd]; ok {
		return nil, errors.New(msg)
	}
	if out, ok := f.out[cmd]; ok {
		return []byte(out), nil
	}
	return nil, errors.New(cmd + ": no such device")
}

// tree writes files (path -> content) under a temporary root; a content
// starting with "->" makes a symlink, a path ending in / a directory.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(p, "/"):
			err := os.MkdirAll(full, 0o755)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(c, "->"):
			if err := os.Symlink(strings.TrimPrefix(c, "->"), full); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// calicoNode is a sysfs/procfs fixture: 4 CPUs on 2 NUMA nodes, a 4-queue
// NIC ens1f0 at MTU 9000 with MSI IRQs 100-101 and a named IRQ 102,
// Calico VXLAN (vxlan.calico, two cali* veths), a cni0 bridge, tunl0 and
// a Geneve device told by DEVTYPE; no nf_conntrack.
func calicoNode(t testing.TB) string {
	f := map[string]string{
		"proc/sys/kernel/osrelease":                          "6.8.0-45-generic\n",
		"proc/sys/net/core/rps_sock_flow_entries":            "0\n",
		"proc/sys/net/core/busy_poll":                        "0\n",
		"proc/sys/net/core/busy_read":                        "50\n",
		"proc/net/route":                                     "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n10.0.0.0\t000A0A0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\nens1f0\t00000000\t010A0A0A\t0003\t0\t0\t0\t00000000\n",
		"proc/interrupts":                                    "   CPU0 CPU1 CPU2 CPU3\n 100: 1 2 3 4 PCI-MSIX mlx5_comp0@pci:0000:3b:00.0\n 101: 1 2 3 4 PCI-MSIX mlx5_comp1@pci:0000:3b:00.0\n 102: 0 0 0 0 PCI-MSIX ens1f0-TxRx-2\n 103: 0 0 0 0 PCI-MSIX other\nNMI: 0 0 0 0 Non-maskable interrupts\n",
		"proc/irq/100/smp_affinity_list":                     "0\n",
		"proc/irq/101/smp_affinity_list":                     "1\n",
		"proc/irq/102/smp_affinity_list":                     "2\n",
		"sys/devices/system/cpu/online":                      "0-3\n",
		"sys/devices/system/node/node0/cpulist":              "0-1\n",
		"sys/devices/system/node/node1/cpulist":              "2-3\n",
		"sys/devices/pci/0000:3b:00.0/numa_node":             "1\n",
		"sys/devices/pci/0000:3b:00.0/msi_irqs/100":          "msix",
		"sys/devices/pci/0000:3b:00.0/msi_irqs/101":          "msix",
		"sys/devices/pci/0000:3b:00.0/driver":                "->../../../bus/pci/drivers/mlx5_core",
		"sys/bus/pci/drivers/mlx5_core/":                     "",
		"sys/class/net/ens1f0/device":                        "->../../../devices/pci/0000:3b:00.0",
		"sys/class/net/ens1f0/mtu":                           "9000\n",
		"sys/class/net/vxlan.calico/mtu":                     "1450\n",
		"sys/class/net/vxlan.calico/uevent":                  "DEVTYPE=vxlan\nINTERFACE=vxlan.calico\n",
		"sys/class/net/cali1234/mtu":                         "1450\n",
		"sys/class/net/cali5678/mtu":                         "1440\n",
		"sys/class/net/cni0/mtu":                             "1500\n",
		"sys/class/net/cni0/bridge/":                         "",
		"sys/class/net/tunl0/mtu":                            "1480\n",
		"sys/class/net/tunl0/type":                           "768\n",
		"sys/class/net/gnv0/mtu":                             "1450\n",
		"sys/class/net/gnv0/uevent":                          "DEVTYPE=geneve\n",
		"sys/class/net/lo/mtu":                               "65536\n",
		"sys/devices/system/cpu/cpuidle/current_driver":      "intel_idle\n",
		"sys/devices/system/cpu/cpuidle/current_governor":    "menu\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state0/name":    "POLL\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state0/latency": "0\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state1/name":    "C6\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state1/latency": "133\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state1/disable": "1\n",
		"etc/cni/net.d/10-calico.conflist":                   `{"name":"k8s-pod-network","plugins":[{"type":"calico"},{"type":"portmap"}]}`,
	}
	for i := 0; i < 4; i++ {
		n := string(rune('0' + i))
		f["sys/devices/system/cpu/cpu"+n+"/topology/physical_package_id"] = "0\n"
		f["sys/devices/system/cpu/cpu"+n+"/topology/core_id"] = n + "\n"
		f["sys/class/net/ens1f0/queues/rx-"+n+"/rps_cpus"] = "0\n"
		f["sys/class/net/ens1f0/queues/rx-"+n+"/rps_flow_cnt"] = "0\n"
		f["sys/class/net/ens1f0/queues/tx-"+n+"/xps_cpus"] = "0\n"
	}
	f["sys/class/net/ens1f0/queues/rx-10/rps_cpus"] = "f\n"
	f["sys/class/net/ens1f0/queues/rx-10/rps_flow_cnt"] = "2048\n"
	return tree(t, f)
}

func TestInspectFixture(t *testing.T) {
	root := calicoNode(t)
	run := &fakeRunner{t: t, out: map[string]string{
		"ethtool -k ens1f0":       "Features for ens1f0:\ngeneric-receive-offload: on\ntx-udp_tnl-segmentation: on\ntx-ipxip4-segmentation: off [fixed]\nloopback: off [fixed]\n",
		"ethtool -x ens1f0":       string(read(t, "ethtool-x-mlx5.txt")),
		"ethtool -l ens1f0":       "Channel parameters for ens1f0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t0\nCombined:\t8\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t0\nCombined:\t4\n",
		"ethtool -k vxlan.calico": "Features for vxlan.calico:\ngeneric-receive-offload: off\n",
		"iptables-save -c":        "*filter\n:INPUT ACCEPT [1:2]\n:cali-x - [0:0]\n[3:4] -A INPUT -j cali-x\n[0:0] -A cali-x -j ACCEPT\nCOMMIT\n",
	}, fail: map[string]string{"nft -j list ruleset": "nft: command not found"}}
	env := Env{Root: root, Run: run, Qdiscs: func() (map[string]string, error) { return map[string]string{"ens1f0": "mq"}, nil }}
	in := Inspect(context.Background(), env)

	if in.Kernel != "6.8.0-45-generic" || in.CPUs != 4 || in.OnlineCPUs != "0-3" || in.NUMANodes != 2 || in.Underlay != "ens1f0" {
		t.Errorf("machine: kernel %q cpus %d (%s) numa %d underlay %q", in.Kernel, in.CPUs, in.OnlineCPUs, in.NUMANodes, in.Underlay)
	}
	if len(in.NICs) != 1 {
		t.Fatalf("NICs %+v, want ens1f0 only", in.NICs)
	}
	n := in.NICs[0]
	if n.Name != "ens1f0" || n.Driver != "mlx5_core" || n.MTU != 9000 || n.NUMANode != 1 || n.RxQueues != 5 || n.TxQueues != 4 {
		t.Errorf("NIC %+v", n)
	}
	var qnames []string
	for _, q := range n.Queues {
		qnames = append(qnames, q.Name)
	}
	if !slices.Equal(qnames, []string{"rx-0", "rx-1", "rx-2", "rx-3", "rx-10"}) || n.Queues[4].RPSCPUs != "f" || n.Queues[4].FlowCnt != 2048 {
		t.Errorf("queues %+v", n.Queues)
	}
	var irqs []string
	for _, q := range n.IRQs {
		irqs = append(irqs, q.Name+"@"+q.CPUs)
	}
	if !slices.Equal(irqs, []string{"mlx5_comp0@pci:0000:3b:00.0@0", "mlx5_comp1@pci:0000:3b:00.0@1", "ens1f0-TxRx-2@2"}) {
		t.Errorf("IRQs %v", irqs)
	}
	if n.Channels == nil || *n.Channels != (Channels{MaxCombined: 8, Combined: 4}) {
		t.Errorf("channels %+v", n.Channels)
	}
	if n.RSS == nil || n.RSS.Rings != 4 || n.RSS.Table != 32 {
		t.Errorf("RSS %+v", n.RSS)
	}
	if !n.Offloads[FeatGRO].On || !n.Offloads[FeatUDPTunnel].On || n.Offloads[FeatIPIP].On || !n.Offloads[FeatIPIP].Fixed {
		t.Errorf("offloads %+v", n.Offloads)
	}
	if _, kept := n.Offloads["loopback"]; kept {
		t.Errorf("offloads keep only Features: %+v", n.Offloads)
	}
	var tun []string
	for _, d := range in.Tunnels {
		tun = append(tun, d.Name+":"+d.Kind)
	}
	if !slices.Equal(tun, []string{"gnv0:geneve", "tunl0:ipip", "vxlan.calico:vxlan"}) {
		t.Errorf("tunnels %v", tun)
	}
	if in.Tunnels[2].Offloads[FeatGRO].On || in.Tunnels[2].MTU != 1450 {
		t.Errorf("vxlan.calico %+v", in.Tunnels[2])
	}
	if len(in.Bridges) != 1 || in.Bridges[0].Name != "cni0" {
		t.Errorf("bridges %+v", in.Bridges)
	}
	if len(in.PodLinks) != 1 || in.PodLinks[0] != (LinkGroup{Prefix: "cali", Count: 2, MinMTU: 1440, MaxMTU: 1450}) {
		t.Errorf("pod links %+v", in.PodLinks)
	}
	if in.CNI.Name != "calico" || in.CNI.Mode != "vxlan" {
		t.Errorf("CNI %+v", in.CNI)
	}
	if in.Sysctls[SysBusyRead] != 50 || in.Sysctls[SysRPSSockFlowEntries] != 0 {
		t.Errorf("sysctls %v", in.Sysctls)
	}
	if in.Netfilter.IptablesRules != 2 || in.Netfilter.IptablesChains != 2 {
		t.Errorf("netfilter %+v", in.Netfilter)
	}
	if in.Qdiscs["ens1f0"] != "mq" {
		t.Errorf("qdiscs %v", in.Qdiscs)
	}
	for key, want := range map[string]string{
		"sysctl " + SysConntrackMax: "nf_conntrack not loaded",
		"nftables":                  "command not found",
		"offloads tunl0":            "no such device",
	} {
		if !strings.Contains(in.Unknown[key], want) {
			t.Errorf("Unknown[%q] = %q, want %q", key, in.Unknown[key], want)
		}
	}
	if c := in.CPUIdle; c == nil || c.String() != "driver intel_idle, governor menu; states (exit latency): POLL (0 µs), C6 (133 µs) disabled" {
		t.Errorf("CPUIdle = %v", c)
	}
	if _, err := json.Marshal(in); err != nil {
		t.Error(err)
	}
}

// Nothing at all to read: every fact is unknown with a reason, none fatal.
func TestInspectEmptyRoot(t *testing.T) {
	in := Inspect(context.Background(), Env{Root: t.TempDir()})
	for _, key := range []string{"kernel", "cpus", "devices", "underlay", "iptables", "nftables", "qdiscs", "sysctl " + SysBusyPoll} {
		if in.Unknown[key] == "" {
			t.Errorf("Unknown[%q] missing: %v", key, in.Unknown)
		}
	}
	if in.Version != Version || len(in.NICs) != 0 {
		t.Errorf("%+v", in)
	}
}

// A NIC whose ethtool fails keeps the rest of what was read.
func TestInspectWithoutEthtool(t *testing.T) {
	root := calicoNode(t)
	run := &fakeRunner{t: t, fail: map[string]string{}}
	in := Inspect(context.Background(), Env{Root: root, Run: run})
	if len(in.NICs) != 1 || in.NICs[0].RxQueues != 5 || in.NICs[0].Offloads != nil || in.NICs[0].RSS != nil {
		t.Errorf("NIC %+v", in.NICs)
	}
	if !strings.Contains(in.Unknown["offloads ens1f0"], "no such device") || !strings.Contains(in.Unknown["rss ens1f0"], "no such device") ||
		!strings.Contains(in.Unknown["channels ens1f0"], "no such device") || in.NICs[0].Channels != nil {
		t.Errorf("unknown %v", in.Unknown)
	}
	if !slices.Contains(run.calls, "ethtool -k ens1f0") {
		t.Errorf("calls %v", run.calls)
	}
}

// TestInspectVethUnderlay: a node whose default route leaves through a
// veth (kind-style, cnibench's test cluster) records it as a virtual NIC
// with its queues, without IRQs or RSS and without running ethtool -x;
// another veth stays unclassified.
func TestInspectVethUnderlay(t *testing.T) {
	root := tree(t, map[string]string{
		"proc/sys/kernel/osrelease":                   "6.18.44\n",
		"proc/net/route":                              "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\neth1\t00000000\t014D0A0A\t0003\t0\t0\t0\t00000000\n",
		"sys/devices/system/cpu/online":               "0-1\n",
		"sys/class/net/eth1/mtu":                      "1500\n",
		"sys/class/net/eth1/queues/rx-0/rps_cpus":     "0\n",
		"sys/class/net/eth1/queues/rx-0/rps_flow_cnt": "0\n",
		"sys/class/net/eth1/queues/tx-0/xps_cpus":     "0\n",
		"sys/class/net/veth1234/mtu":                  "1500\n",
		"sys/class/net/lo/mtu":                        "65536\n",
	})
	run := &fakeRunner{t: t, out: map[string]string{"ethtool -k eth1": "Features for eth1:\ngeneric-receive-offload: off\n"}}
	in := Inspect(context.Background(), Env{Root: root, Run: run})
	if len(in.NICs) != 1 {
		t.Fatalf("NICs %+v, want the veth underlay alone", in.NICs)
	}
	n := in.NICs[0]
	if n.Name != "eth1" || !n.Virtual || n.RxQueues != 1 || n.TxQueues != 1 || len(n.Queues) != 1 || n.IRQs != nil || n.RSS != nil {
		t.Errorf("underlay %+v", n)
	}
	if o, ok := n.Offloads["generic-receive-offload"]; !ok || o.On {
		t.Errorf("offloads %+v", n.Offloads)
	}
	if slices.Contains(run.calls, "ethtool -x eth1") {
		t.Errorf("ethtool -x ran on a veth: %v", run.calls)
	}
}

// TestInspectSysctlHook: with Env.Sysctl the sysctls come from it (the
// agent's init-namespace reads), not from Root/proc/sys.
func TestInspectSysctlHook(t *testing.T) {
	root := calicoNode(t)
	var asked []string
	env := Env{Root: root, Run: &fakeRunner{t: t}, Sysctl: func(p string) (string, error) {
		asked = append(asked, p)
		if p == "/proc/sys/net/core/rps_sock_flow_entries" {
			return "32768\n", nil
		}
		return "", os.ErrNotExist
	}}
	in := Inspect(context.Background(), env)
	if in.Sysctls[SysRPSSockFlowEntries] != 32768 || !slices.Contains(asked, "/proc/sys/net/core/busy_read") {
		t.Errorf("sysctls %v from %v", in.Sysctls, asked)
	}
	if in.Unknown["sysctl "+SysBusyRead] == "" {
		t.Errorf("a sysctl the hook cannot read is not unknown: %v", in.Unknown)
	}
}

// TestInspectStackedUnderlay: a default route through a VLAN finds the
// device under it (sysfs lower_* links), and through a VLAN on a bond
// the bond's ports, followed down and sorted; a plain device has none.
func TestInspectStackedUnderlay(t *testing.T) {
	route := func(dev string) string {
		return "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n" + dev + "\t00000000\t014D0A0A\t0003\t0\t0\t0\t00000000\n"
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"vlan on a NIC", map[string]string{
			"proc/net/route":                    route("eth0.100"),
			"sys/class/net/eth0.100/mtu":        "1500\n",
			"sys/class/net/eth0.100/lower_eth0": "->../eth0",
			"sys/class/net/eth0/mtu":            "1500\n",
			"sys/class/net/eth0/upper_eth0.100": "->../eth0.100",
		}, []string{"eth0"}},
		{"vlan on a bond", map[string]string{
			"proc/net/route":                    route("bond0.7"),
			"sys/class/net/bond0.7/mtu":         "9000\n",
			"sys/class/net/bond0.7/lower_bond0": "->../bond0",
			"sys/class/net/bond0/mtu":           "9000\n",
			"sys/class/net/bond0/lower_ens2":    "->../ens2",
			"sys/class/net/bond0/lower_ens1":    "->../ens1",
			"sys/class/net/ens1/mtu":            "9000\n",
			"sys/class/net/ens2/mtu":            "9000\n",
		}, []string{"ens1", "ens2"}},
		{"plain", map[string]string{
			"proc/net/route":         route("eth0"),
			"sys/class/net/eth0/mtu": "1500\n",
		}, nil},
		// OpenShift's br-ex: an Open vSwitch internal port, the NIC
		// under it on the datapath (master ovs-system); the veth of a
		// container beside it is no port of the switch.
		{"ovs bridge", map[string]string{
			"proc/net/route":               route("br-ex"),
			"sys/class/net/br-ex/mtu":      "1500\n",
			"sys/class/net/br-ex/iflink":   "5\n",
			"sys/class/net/br-ex/ifindex":  "5\n",
			"sys/class/net/ovs-system/mtu": "1500\n",
			"sys/class/net/ens3/mtu":       "1500\n",
			"sys/class/net/ens3/device":    "->../../../devices/pci0000:00/0000:00:03.0",
			"sys/class/net/ens3/master":    "->../ovs-system",
			"sys/class/net/veth1/mtu":      "1500\n",
			"sys/class/net/veth1/master":   "->../ovs-system",
		}, []string{"ens3"}},
		// br-ex over a bond (OpenShift's usual layout): the bond's
		// ports, not br-ex, whose queues steer nothing.
		{"ovs bridge over a bond", map[string]string{
			"proc/net/route":                      route("br-ex"),
			"sys/class/net/br-ex/mtu":             "1500\n",
			"sys/class/net/br-ex/iflink":          "5\n",
			"sys/class/net/br-ex/ifindex":         "5\n",
			"sys/class/net/ovs-system/mtu":        "1500\n",
			"sys/class/net/bond0/mtu":             "1500\n",
			"sys/class/net/bond0/master":          "->../ovs-system",
			"sys/class/net/bond0/lower_ens1":      "->../ens1",
			"sys/class/net/bond0/lower_ens2":      "->../ens2",
			"sys/class/net/ens1/mtu":              "1500\n",
			"sys/class/net/ens1/device":           "->../../../devices/pci0000:00/0000:00:03.0",
			"sys/class/net/ens2/mtu":              "1500\n",
			"sys/class/net/ens2/device":           "->../../../devices/pci0000:00/0000:00:04.0",
			"sys/class/net/genev_sys_6081/mtu":    "65000\n",
			"sys/class/net/genev_sys_6081/master": "->../ovs-system",
		}, []string{"ens1", "ens2"}},
		// A node's address on a Linux bridge over its NIC, with a pod's
		// veth and a VM's tap as ports: the NIC alone.
		{"linux bridge", map[string]string{
			"proc/net/route":                     route("br0"),
			"sys/class/net/br0/mtu":              "1500\n",
			"sys/class/net/br0/bridge/stp_state": "0\n",
			"sys/class/net/br0/lower_eth0":       "->../eth0",
			"sys/class/net/br0/lower_veth1":      "->../veth1",
			"sys/class/net/br0/lower_tap0":       "->../tap0",
			"sys/class/net/eth0/mtu":             "1500\n",
			"sys/class/net/eth0/device":          "->../../../devices/pci0000:00/0000:00:03.0",
			"sys/class/net/veth1/mtu":            "1500\n",
			"sys/class/net/tap0/mtu":             "1500\n",
		}, []string{"eth0"}},
		// A veth underlay beside an Open vSwitch: no port of it.
		{"veth beside ovs", map[string]string{
			"proc/net/route":               route("eth0"),
			"sys/class/net/eth0/mtu":       "1500\n",
			"sys/class/net/eth0/iflink":    "9\n",
			"sys/class/net/eth0/ifindex":   "2\n",
			"sys/class/net/ovs-system/mtu": "1500\n",
			"sys/class/net/ens3/mtu":       "1500\n",
			"sys/class/net/ens3/device":    "->../../../devices/pci0000:00/0000:00:03.0",
			"sys/class/net/ens3/master":    "->../ovs-system",
		}, nil},
	} {
		c.files["proc/sys/kernel/osrelease"] = "6.1.0\n"
		root := tree(t, c.files)
		in := Inspect(context.Background(), Env{Root: root, Run: &fakeRunner{t: t}})
		if !slices.Equal(in.UnderlayLower, c.want) {
			t.Errorf("%s: underlay %s on %v, want %v", c.name, in.Underlay, in.UnderlayLower, c.want)
		}
		// The kube agent's answer for the device holding a node's
		// address, where its RPS masks go.
		if got := StackedOn(root, in.Underlay); !slices.Equal(got, c.want) {
			t.Errorf("%s: StackedOn(%s) = %v, want %v", c.name, in.Underlay, got, c.want)
		}
	}
}
