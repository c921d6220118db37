package advise

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// queueNode is the 8-CPU fixture with eth2's interrupts replaced by irqs
// (all on CPU 0) and cores physical cores.
func queueNode(t *testing.T, cores string, irqs ...string) *inspect.Inspection {
	in := load(t, "multiqueue-rss-one-cpu")
	in.NICs[0].IRQs = nil
	for i, name := range irqs {
		in.NICs[0].IRQs = append(in.NICs[0].IRQs, inspect.IRQ{IRQ: 100 + i, Name: name, CPUs: "0"})
	}
	in.CoreCPUs = cores
	return in
}

// Transmit interrupts were counted as queues: virtio's input.N/output.N
// (alternating in /proc/interrupts) and igb's eth0-rx-N/eth0-tx-N put
// every receive queue on half the cores, and 4 queue pairs on 4 cores
// read "8 queues on 4 cores: ethtool -L combined 4" where combined was
// already 4. Receive queues now spread over every core, a transmit
// interrupt goes where its queue's receive one went.
func TestIRQSpreadReceiveQueues(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ rx, tx string }{{"virtio2-input.%d", "virtio2-output.%d"}, {"eth2-rx-%d", "eth2-tx-%d"}} {
		var irqs []string
		for q := 0; q < 4; q++ {
			irqs = append(irqs, fmt.Sprintf(c.rx, q), fmt.Sprintf(c.tx, q))
		}
		in := queueNode(t, "0-3", append(irqs, "virtio2-config")...)
		in.NICs[0].Queues = in.NICs[0].Queues[:4]
		got := Evaluate(rs[0], in)
		if got.Status != Candidate {
			t.Fatalf("%s: %s %q", c.rx, got.Status, got.Why)
		}
		if a := got.Knobs[0].Params["affinity"]; !strings.HasSuffix(a, "over CPUs 0-3") {
			t.Errorf("%s: %s", c.rx, a)
		}
		script := got.Permanent[0].Text
		for q := 0; q < 4; q++ {
			for _, name := range []string{fmt.Sprintf(c.rx, q), fmt.Sprintf(c.tx, q)} {
				if !strings.Contains(script, fmt.Sprintf("pin %s %d\n", name, q)) && !strings.HasSuffix(script, fmt.Sprintf("pin %s %d", name, q)) {
					t.Errorf("%s not on CPU %d:\n%s", name, q, script)
				}
			}
		}
	}
}

// One core (its two SMT threads, or one CPU) has nothing to spread over:
// irq-spread fired there and advised "ethtool -L eth2 combined 1",
// shrinking RSS to one queue.
func TestIRQSpreadNeedsTwoCores(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	in := queueNode(t, "0", "eth2-TxRx-0", "eth2-TxRx-1")
	in.CPUs, in.OnlineCPUs = 2, "0-1"
	if got := Evaluate(rs[0], in); got.Status != NotApplicable || !strings.Contains(strings.Join(got.Why, " "), "irq_spread_cores = 1") {
		t.Errorf("one core with two threads: %s %v %q", got.Status, got.Knobs, got.Why)
	}
}

// The risk says isolated CPUs should stay out of the list; spreadCores
// never read them. CPUs 2-3 isolated: the queues go to 0-1 and 4-7.
func TestIRQSpreadLeavesIsolatedCPUsOut(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "multiqueue-rss-one-cpu")
	in.IsolatedCPUs = "2-3"
	got := Evaluate(rs[0], in)
	if got.Status != Candidate {
		t.Fatalf("%s %q", got.Status, got.Why)
	}
	if a := got.Knobs[0].Params["affinity"]; !strings.Contains(a, "over CPUs 0-1,4-7 (8 receive queues on 6 cores") {
		t.Errorf("%s", a)
	}
	// Each "pin NAME CPU" line of the script, the last one too (the
	// script ends without a newline: a search for " 3\n" missed it).
	s := got.Permanent[0].Text
	pins := 0
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "pin" {
			continue
		}
		pins++
		if f[2] == "2" || f[2] == "3" {
			t.Errorf("pins %s to isolated CPU %s:\n%s", f[1], f[2], s)
		}
	}
	if pins != 8 {
		t.Errorf("%d pin lines, want 8:\n%s", pins, s)
	}
	in.IsolatedCPUs = "0-7"
	if got := Evaluate(rs[0], in); got.Status != Unknown || !strings.Contains(strings.Join(got.Why, " "), "isolated") {
		t.Errorf("all isolated: %s %q", got.Status, got.Why)
	}
}
