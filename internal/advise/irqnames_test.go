package advise

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// irq-spread read rx/tx/comp/input/output/queue/-io- in an interrupt's
// name and so never fired on Azure (MANA's mana_qN), GCP (gve's
// gve-ntfy-blkN) or sfc, bnx2x and qede NICs (eth0-N, eth0-fp-N), whose
// queue vectors say no such word. Each case is a NIC's /proc/interrupts
// lines as those drivers name them (irqnames.go cites where), with the
// receive queues irq-spread must count and pin: transmit-only vectors,
// vectors of no queue in use and control ones are left out, a combined
// vector counts once.
func TestIRQSpreadDriverNames(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		driver    string
		rxQueues  int
		lines     string
		receive   []string // the pinned receive (or combined) vectors, in order
		tx        []string // transmit vectors pinned beside their queue's
		notPinned []string
	}{
		{"mana", 4, `
 24:          5          0   Hyper-V PCIe MSI 1099511627776-edge      mana_hwc@pci:7870:00:00.0
 25:       1000          0   Hyper-V PCIe MSI 1099511627777-edge      mana_q0@pci:7870:00:00.0
 26:       1000          0   Hyper-V PCIe MSI 1099511627778-edge      mana_q1@pci:7870:00:00.0
 27:       1000          0   Hyper-V PCIe MSI 1099511627779-edge      mana_q2@pci:7870:00:00.0
 28:       1000          0   Hyper-V PCIe MSI 1099511627780-edge      mana_q3@pci:7870:00:00.0
 29:          0          0   Hyper-V PCIe MSI 1099511627781-edge      mana_q4@pci:7870:00:00.0`,
			[]string{"mana_q0@pci:7870:00:00.0", "mana_q1@pci:7870:00:00.0", "mana_q2@pci:7870:00:00.0", "mana_q3@pci:7870:00:00.0"}, nil,
			[]string{"mana_hwc@pci:7870:00:00.0", "mana_q4@pci:7870:00:00.0"}},
		{"gve", 2, `
 24:          3          0   PCI-MSIX-0000:00:04.0   0-edge      gve-mgmnt@pci:0000:00:04.0
 25:       1000          0   PCI-MSIX-0000:00:04.0   1-edge      gve-ntfy-blk0@pci:0000:00:04.0
 26:       1000          0   PCI-MSIX-0000:00:04.0   2-edge      gve-ntfy-blk1@pci:0000:00:04.0
 27:       1000          0   PCI-MSIX-0000:00:04.0   3-edge      gve-ntfy-blk2@pci:0000:00:04.0
 28:       1000          0   PCI-MSIX-0000:00:04.0   4-edge      gve-ntfy-blk3@pci:0000:00:04.0`,
			[]string{"gve-ntfy-blk2@pci:0000:00:04.0", "gve-ntfy-blk3@pci:0000:00:04.0"},
			[]string{"gve-ntfy-blk0@pci:0000:00:04.0", "gve-ntfy-blk1@pci:0000:00:04.0"}, []string{"gve-mgmnt@pci:0000:00:04.0"}},
		{"sfc", 2, `
 60:       1000          0   IR-PCI-MSI 1048576-edge      eth2-0
 61:       1000          0   IR-PCI-MSI 1048577-edge      eth2-1
 62:          0          0   IR-PCI-MSI 1048578-edge      eth2-ptp`,
			[]string{"eth2-0", "eth2-1"}, nil, []string{"eth2-ptp"}},
		{"sfc", 2, `
 60:       1000          0   IR-PCI-MSI 1048576-edge      eth2-rx-0
 61:       1000          0   IR-PCI-MSI 1048577-edge      eth2-rx-1
 62:       1000          0   IR-PCI-MSI 1048578-edge      eth2-tx-0
 63:       1000          0   IR-PCI-MSI 1048579-edge      eth2-tx-1
 64:          0          0   IR-PCI-MSI 1048580-edge      eth2-xdp-0`,
			[]string{"eth2-rx-0", "eth2-rx-1"}, []string{"eth2-tx-0", "eth2-tx-1", "eth2-xdp-0"}, nil},
		{"tg3", 2, `
 50:          7          0   IR-PCI-MSI 1048576-edge      eth2-0
 51:       1000          0   IR-PCI-MSI 1048577-edge      eth2-txrx-1
 52:       1000          0   IR-PCI-MSI 1048578-edge      eth2-rx-2`,
			[]string{"eth2-txrx-1", "eth2-rx-2"}, nil, []string{"eth2-0"}},
		{"bnx2x", 2, `
 70:          2          0   IR-PCI-MSI 1048576-edge      eth2
 71:       1000          0   IR-PCI-MSI 1048577-edge      eth2-fp-0
 72:       1000          0   IR-PCI-MSI 1048578-edge      eth2-fp-1`,
			[]string{"eth2-fp-0", "eth2-fp-1"}, nil, []string{"eth2"}},
		{"qede", 2, `
 70:       1000          0   IR-PCI-MSI 1048577-edge      eth2-fp-0
 71:       1000          0   IR-PCI-MSI 1048578-edge      eth2-fp-1
 72:       1000          0   IR-PCI-MSI 1048579-edge      eth2-fp-2
 73:       1000          0   IR-PCI-MSI 1048580-edge      eth2-fp-3`,
			[]string{"eth2-fp-0", "eth2-fp-1"}, nil, []string{"eth2-fp-2", "eth2-fp-3"}},
	}
	for _, c := range cases {
		what := fmt.Sprintf("%s %v", c.driver, c.receive)
		irqs, err := inspect.ParseInterrupts([]byte("           CPU0       CPU1\n" + strings.TrimPrefix(c.lines, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		in := queueNode(t, "0-3")
		for _, it := range irqs {
			in.NICs[0].IRQs = append(in.NICs[0].IRQs, inspect.IRQ{IRQ: it.IRQ, Name: it.Name, CPUs: "0"})
		}
		in.NICs[0].Driver, in.NICs[0].RxQueues, in.NICs[0].Queues = c.driver, c.rxQueues, in.NICs[0].Queues[:c.rxQueues]
		got := Evaluate(rs[0], in)
		if got.Status != Candidate {
			t.Errorf("%s: %s %q", what, got.Status, got.Why)
			continue
		}
		if a := got.Knobs[0].Params["affinity"]; !strings.HasSuffix(a, fmt.Sprintf("over CPUs 0-%d", len(c.receive)-1)) {
			t.Errorf("%s: %s", what, a)
		}
		script := got.Permanent[0].Text + "\n"
		for i, name := range c.receive {
			if !strings.Contains(script, fmt.Sprintf("pin %s %d\n", name, i)) {
				t.Errorf("%s: %s not on CPU %d:\n%s", what, name, i, script)
			}
		}
		for _, name := range c.tx {
			if name != "eth2-xdp-0" && !strings.Contains(script, "pin "+name+" ") {
				t.Errorf("%s: transmit vector %s not beside its queue:\n%s", what, name, script)
			}
			if r := irqRole(&in.NICs[0], name); r != "tx" {
				t.Errorf("%s: %s is %q, want tx", what, name, r)
			}
		}
		for _, name := range c.notPinned {
			if strings.Contains(script, "pin "+name+" ") {
				t.Errorf("%s: pins %s:\n%s", what, name, script)
			}
		}
	}
}

// gve asks for a vector per notify block at probe and keeps them when it
// runs fewer queues (gve_init_priv's default, or ethtool -L): with 8
// blocks and rx 2 tx 2, blocks 2-3 and 6-7 serve no queue. irq-spread
// counted 6-7 as receive queues too and advised "4 receive queues on 2
// cores: ethtool -L eth2 rx 2 tx 2", which was already set, and fired
// again after. Each case is gve's /proc/interrupts lines and ethtool -l.
func TestIRQSpreadGveUnusedBlocks(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	var blocks strings.Builder
	for b := 0; b < 8; b++ {
		fmt.Fprintf(&blocks, " %d:       1000          0   PCI-MSIX-0000:00:04.0   %d-edge      gve-ntfy-blk%d@pci:0000:00:04.0\n", 25+b, b+1, b)
	}
	blk := func(b int) string { return fmt.Sprintf("gve-ntfy-blk%d@pci:0000:00:04.0", b) }
	for _, c := range []struct {
		rx, tx   int
		affinity string
		roles    map[int]string // block: irqClass's role
	}{
		{2, 2, "over CPUs 0-1", map[int]string{0: "tx", 1: "tx", 2: "", 3: "", 4: "rx", 5: "rx", 6: "", 7: ""}},
		{4, 2, "over CPUs 0-1 (4 receive queues on 2 cores: ethtool -L eth2 rx 2 tx 2, fewer queues than now, would give each queue a core of its own, as scaling.rst suggests)",
			map[int]string{0: "tx", 1: "tx", 2: "", 3: "", 4: "rx", 7: "rx"}},
	} {
		irqs, err := inspect.ParseInterrupts([]byte("           CPU0       CPU1\n" + blocks.String()))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := inspect.ParseChannels([]byte(fmt.Sprintf("Channel parameters for eth2:\nPre-set maximums:\nRX:\t\t4\nTX:\t\t4\nOther:\t\t0\nCombined:\t0\n"+
			"Current hardware settings:\nRX:\t\t%d\nTX:\t\t%d\nOther:\t\t0\nCombined:\t0\n", c.rx, c.tx)))
		if err != nil {
			t.Fatal(err)
		}
		in := queueNode(t, "0-1")
		n := &in.NICs[0]
		for _, it := range irqs {
			n.IRQs = append(n.IRQs, inspect.IRQ{IRQ: it.IRQ, Name: it.Name, CPUs: "0"})
		}
		n.Driver, n.RxQueues, n.TxQueues, n.Queues, n.Channels = "gve", c.rx, c.tx, n.Queues[:c.rx], &ch
		got := Evaluate(rs[0], in)
		if got.Status != Candidate {
			t.Fatalf("rx %d tx %d: %s %q", c.rx, c.tx, got.Status, got.Why)
		}
		if a := got.Knobs[0].Params["affinity"]; a != "one queue interrupt per physical core, round robin "+c.affinity {
			t.Errorf("rx %d tx %d: %s\nwant %s", c.rx, c.tx, a, c.affinity)
		}
		for b, want := range c.roles {
			if r := irqRole(n, blk(b)); r != want {
				t.Errorf("rx %d tx %d: %s is %q, want %q", c.rx, c.tx, blk(b), r, want)
			}
		}
		if s := got.Permanent[0].Text + "\n"; !strings.Contains(s, "pin "+blk(4)+" 0\npin "+blk(5)+" 1\n") || strings.Contains(s, blk(2)) || strings.Contains(s, blk(3)) {
			t.Errorf("rx %d tx %d: pin script:\n%s", c.rx, c.tx, s)
		}
	}
}
