package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// RPS steers each queue within the NUMA node of the CPU its interrupt
// runs on (scaling.rst: "the same memory domain as the interrupting
// CPU"), not over every CPU: on calico-vxlan-jumbo (2 nodes, the NIC's
// queue interrupts on CPUs 8-11 of node 1) that is node 1's CPUs, as
// numa-placement keeps the pods there. Queues whose interrupts sit on
// different nodes each take their own node's; without interrupts the
// NIC's node decides; only on one node, or where nothing tells, every
// CPU.
func TestRPSMaskByNUMANode(t *testing.T) {
	rfs := func(in *inspect.Inspection) Result {
		t.Helper()
		rs, err := Lookup("rfs")
		if err != nil {
			t.Fatal(err)
		}
		return Evaluate(rs[0], in)
	}
	in := load(t, "calico-vxlan-jumbo")
	got := rfs(in)
	if k := knobText(got.Knobs); !strings.Contains(k, "rps_cpus=0000ff00,") {
		t.Errorf("queue interrupts on node 1: %s, want node 1's CPUs 8-15 (0000ff00)", k)
	}
	if p := got.Permanent[1].Text; !strings.Contains(p, "for q in rx-*; do echo 0000ff00 > $$q/rps_cpus; echo 8192 > $$q/rps_flow_cnt; done") {
		t.Errorf("udev rule: %s", p)
	}
	// Two queues' interrupts on node 0, two on node 1: each its own.
	in = load(t, "calico-vxlan-jumbo")
	in.NICs[0].IRQs[0].CPUs, in.NICs[0].IRQs[1].CPUs = "0", "1-2"
	got = rfs(in)
	if k := knobText(got.Knobs); !strings.Contains(k, "rps_cpus=rx-0:000000ff rx-1:000000ff rx-2:0000ff00 rx-3:0000ff00,") {
		t.Errorf("queues on two nodes: %s", k)
	}
	want := `cd /sys/class/net/\"$$1\"/queues && echo 000000ff > rx-0/rps_cpus; echo 000000ff > rx-1/rps_cpus; echo 0000ff00 > rx-2/rps_cpus; ` +
		"echo 0000ff00 > rx-3/rps_cpus; for q in rx-*; do echo 8192 > $$q/rps_flow_cnt; done"
	if p := got.Permanent[1].Text; !strings.Contains(p, want) {
		t.Errorf("udev rule:\n%s\nwant it to hold\n%s", p, want)
	}
	// An interrupt affine to CPUs of both nodes, or none read: the NIC's
	// node; without that either, every online CPU.
	in = load(t, "calico-vxlan-jumbo")
	in.NICs[0].IRQs[0].CPUs = "0-15"
	in.NICs[0].IRQs = in.NICs[0].IRQs[:1]
	if k := knobText(rfs(in).Knobs); !strings.Contains(k, "rps_cpus=0000ff00,") {
		t.Errorf("interrupts spanning nodes, the NIC on node 1: %s", k)
	}
	in.NICs[0].NUMANode = -1
	if k := knobText(rfs(in).Knobs); !strings.Contains(k, "rps_cpus=0000ffff,") {
		t.Errorf("nothing tells the node: %s, want every CPU", k)
	}
	in = load(t, "calico-vxlan-jumbo")
	in.NUMANodes, in.NodeCPUs = 1, map[int]string{0: "0-15"}
	if k := knobText(rfs(in).Knobs); !strings.Contains(k, "rps_cpus=0000ffff,") {
		t.Errorf("one NUMA node: %s, want every CPU", k)
	}
	// A bond whose ports sit on different nodes: each port's queues its
	// node's, the udev rule telling the ports apart.
	in = load(t, "calico-vxlan-jumbo")
	in.Underlay, in.UnderlayLower = "bond0", []string{"ens1f0", "ens1f1"}
	port := in.NICs[0]
	port.Name, port.NUMANode, port.IRQs = "ens1f1", 0, nil
	in.NICs = append(in.NICs, port, inspect.NIC{Name: "bond0", Virtual: true, MTU: 9000, NUMANode: -1})
	got = rfs(in)
	if p := got.Permanent[1].Text; !strings.Contains(p, `[ \"$$1\" = \"ens1f0\" ] && { echo 0000ff00 > rx-0/rps_cpus;`) ||
		!strings.Contains(p, `[ \"$$1\" = \"ens1f1\" ] && { echo 000000ff > rx-0/rps_cpus;`) {
		t.Errorf("a bond over two nodes: %s", p)
	}
}

// A queue interrupt's number is at the end of its name, before a PCI
// suffix.
func TestIRQQueue(t *testing.T) {
	for name, want := range map[string]int{"mlx5_comp3@pci:0000:3b:00.0": 3, "eth0-txrx-12": 12, "virtio2-input.0": 0, "ena-io-1": 1, "mlx5_async": -1} {
		if got := irqQueue(name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}

// rfs never shrinks a flow table the machine already has: with
// rps_sock_flow_entries at 131072 and no queue's flow count set (RFS
// off, so rfs fires), it keeps 131072 and shares that out over the
// queues, where it proposed 32768 and 8192.
func TestRFSKeepsALargerTable(t *testing.T) {
	in := load(t, "calico-vxlan-jumbo")
	in.Sysctls[inspect.SysRPSSockFlowEntries] = 131072
	rs, _ := Lookup("rfs")
	got := Evaluate(rs[0], in)
	if k := knobText(got.Knobs); got.Status != Candidate || !strings.Contains(k, "rps_flow_cnt=32768, rps_sock_flow_entries=131072") {
		t.Errorf("a table of 131072: %s %s", got.Status, k)
	}
	if p := got.Permanent[0].Text; !strings.Contains(p, "net.core.rps_sock_flow_entries = 131072") {
		t.Errorf("sysctl.d: %s", p)
	}
	in.Sysctls[inspect.SysRPSSockFlowEntries] = 4096
	if k := knobText(Evaluate(rs[0], in).Knobs); !strings.Contains(k, "rps_flow_cnt=8192, rps_sock_flow_entries=32768") {
		t.Errorf("a smaller table grows to 32768: %s", k)
	}
}
