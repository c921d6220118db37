package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// irq-spread's permanent form pins what its knob says (by name: the
// interrupts' numbers change between boots) and keeps irqbalance off
// them, where it only set an empty --policyscript before; it pins to one
// thread per physical core of the NIC's NUMA node (scaling.rst: HT gains
// interrupt handling nothing), round robin where queues outnumber them.
func TestIRQSpread(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "multiqueue-rss-one-cpu") // eth2: 8 queue IRQs on CPU 0, 8 CPUs
	got := Evaluate(rs[0], in)
	if got.Status != Candidate || got.Knobs[0].Params["affinity"] != "one queue interrupt per physical core, round robin over CPUs 0-7" {
		t.Fatalf("one node, no SMT recorded: %s %v %q", got.Status, got.Knobs, got.Why)
	}
	perm := map[string]string{}
	for _, p := range got.Permanent {
		perm[p.Path] = p.Text
	}
	if s := perm["/usr/local/sbin/cnibench-irq-spread"]; !strings.Contains(s, "pin eth2-TxRx-0 0\npin eth2-TxRx-1 1\n") ||
		!strings.Contains(s, "pin eth2-TxRx-7 7") || strings.Contains(s, "pin eth2 ") || !strings.Contains(s, "/proc/irq/$irq/smp_affinity_list") {
		t.Errorf("pin script:\n%s", s)
	}
	if s := perm["/usr/local/sbin/cnibench-irqbalance-policy"]; !strings.Contains(s, `case "$name" in eth2-TxRx-0|eth2-TxRx-1|`) || !strings.Contains(s, "echo ban=true") {
		t.Errorf("irqbalance policy script:\n%s", s)
	}
	if s := perm["/etc/systemd/system/irqbalance.service.d/cnibench.conf"]; !strings.Contains(s, "--policyscript=/usr/local/sbin/cnibench-irqbalance-policy") {
		t.Errorf("irqbalance drop-in:\n%s", s)
	}
	if s := perm["/etc/systemd/system/cnibench-irq-spread.service"]; !strings.Contains(s, "ExecStart=/usr/local/sbin/cnibench-irq-spread") {
		t.Errorf("unit:\n%s", s)
	}
	// Two NUMA nodes, the NIC on node 1, CPUs 4-7 the hyperthreads of
	// 0-3: node 1's physical cores are 2 and 3, which the 8 queues share.
	in.NUMANodes, in.NodeCPUs, in.CoreCPUs, in.NICs[0].NUMANode = 2, map[int]string{0: "0-1,4-5", 1: "2-3,6-7"}, "0-3", 1
	in.NICs[0].Channels = &inspect.Channels{MaxCombined: 8, Combined: 8}
	got = Evaluate(rs[0], in)
	if a := got.Knobs[0].Params["affinity"]; !strings.HasSuffix(a, "over CPUs 2-3 (8 receive queues on 2 cores: ethtool -L eth2 combined 2, fewer queues than now, would give each queue a core of its own, as scaling.rst suggests)") {
		t.Errorf("NIC on node 1 with SMT: %s", a)
	}
	if s := got.Permanent[0].Text; !strings.Contains(s, "pin eth2-TxRx-0 2\npin eth2-TxRx-1 3\npin eth2-TxRx-2 2\n") {
		t.Errorf("pin script on node 1:\n%s", s)
	}
}

// A queue interrupt whose affinity the inspection could not read makes
// irq-spread unknown: its empty CPU list beside the others' "0" is no
// second CPU, which would make the rule not applicable.
func TestIRQSpreadAffinityUnreadable(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "multiqueue-rss-one-cpu")
	in.NICs[0].IRQs[1].CPUs = ""
	in.Unknown = map[string]string{"irq 81 affinity": "permission denied"}
	if got := Evaluate(rs[0], in); got.Status != Unknown || !strings.Contains(strings.Join(got.Why, " "), "irq 81 affinity unknown") {
		t.Errorf("irq-spread with irq 81's affinity unread: %s %q, want unknown naming it", got.Status, got.Why)
	}
}
