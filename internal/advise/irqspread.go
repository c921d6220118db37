package advise

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/cpuset"
)

// Where irq-spread pins a NIC's queue interrupts, and the scripts that
// do it at boot. Documentation/networking/scaling.rst (RSS IRQ
// Configuration): each receive queue has its own interrupt, affined
// through /proc/irq/N/smp_affinity, and irqbalance "may override any
// manual settings"; "For interrupt handling, HT has shown no benefit in
// initial tests, so limit the number of queues to the number of CPU cores
// in the system". So one thread of each physical core (inspect's
// core_cpus) takes a queue, among the cores of the NIC's NUMA node where
// the machine has more than one (a queue's softirq then runs where its
// packets' memory is, as rfs's RPS CPUs and numa-placement's pods do).
// The interrupts are named in the scripts, not numbered: MSI-X vectors
// get other numbers after a reboot, their names ("mlx5_comp3@pci:...",
// "eth0-TxRx-3") stay.

// irqPin is one queue interrupt and the CPU it is pinned to; tx marks a
// transmit-only interrupt, which follows its queue pair's receive one
// and is no queue of its own.
type irqPin struct {
	port, name string
	cpu        int
	tx         bool
}

// irqPins pins each port's receive and combined queue interrupts, in the
// order the port lists them, round robin over its cores (spreadCores).
// A transmit-only interrupt (virtio's output.N, igb's eth0-tx-N) goes
// where the receive interrupt of its queue number went, or is left alone
// where none has that number (irqClass reads the numbers): counted as queues they put every receive
// queue on half the cores.
func irqPins(in *inspect.Inspection) ([]irqPin, error) {
	ns, err := nics(in)
	if err != nil {
		return nil, err
	}
	var out []irqPin
	for _, n := range ns {
		cores, err := spreadCores(in, n)
		if err != nil {
			return nil, err
		}
		i := 0
		byQueue := map[int]int{}
		for _, q := range n.IRQs {
			if r, num := irqClass(n, q.Name); r == "rx" || r == "rxtx" {
				out = append(out, irqPin{port: n.Name, name: q.Name, cpu: cores[i%len(cores)]})
				byQueue[num] = cores[i%len(cores)]
				i++
			}
		}
		for _, q := range n.IRQs {
			if r, num := irqClass(n, q.Name); r == "tx" && num >= 0 {
				if c, ok := byQueue[num]; ok {
					out = append(out, irqPin{port: n.Name, name: q.Name, cpu: c, tx: true})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no queue interrupts", nicNames(ns, ", "))
	}
	return out, nil
}

// spreadCores are the CPUs a port's queue interrupts go to: one per
// physical core (all online CPUs in inspections from before cores were
// read) that is neither isolated nor nohz_full, those of the port's NUMA node where there
// are several nodes and it is known.
func spreadCores(in *inspect.Inspection, n *inspect.NIC) (cpuset.Set, error) {
	cores, err := onlineCPUs(in)
	if err != nil {
		return nil, err
	}
	if in.CoreCPUs != "" {
		if c, err := cpuset.Parse(in.CoreCPUs); err == nil && len(c) > 0 {
			cores = c
		}
	}
	// CPUs kept for latency-critical work (isolcpus=, nohz_full=: inspect
	// joins both, as irqbalance bans both) take no interrupts the script
	// could move there.
	if iso, err := cpuset.Parse(in.IsolatedCPUs); err == nil && len(iso) > 0 {
		cores = slices.DeleteFunc(slices.Clone(cores), iso.Contains)
		if len(cores) == 0 {
			return nil, fmt.Errorf("every core of %s is isolated or nohz_full (%s)", n.Name, in.IsolatedCPUs)
		}
	}
	if in.NUMANodes < 2 || n.NUMANode < 0 {
		return cores, nil
	}
	node, err := cpuset.Parse(in.NodeCPUs[n.NUMANode])
	if err != nil {
		return cores, nil
	}
	local := slices.DeleteFunc(slices.Clone(cores), func(c int) bool { return !node.Contains(c) })
	if len(local) == 0 {
		return cores, nil
	}
	return local, nil
}

// irqCores is {irq_cores}: the CPUs the interrupts go to, per port where
// a bond's ports differ, with how many receive queues share them
// ("8-11", or "8-9 (4 receive queues on 2 cores: ethtool -L ens1f0
// combined 2, ...)"); transmit-only interrupts are no queues here.
func irqCores(in *inspect.Inspection) (string, error) {
	pins, err := irqPins(in)
	if err != nil {
		return "", err
	}
	var ports []string
	used := map[string]cpuset.Set{}
	queues := map[string]int{}
	for _, p := range pins {
		if p.tx {
			continue
		}
		if _, ok := used[p.port]; !ok {
			ports = append(ports, p.port)
		}
		if !used[p.port].Contains(p.cpu) {
			used[p.port] = append(used[p.port], p.cpu)
		}
		queues[p.port]++
	}
	var out []string
	for _, port := range ports {
		set := slices.Sorted(slices.Values(used[port]))
		s := cpuset.Set(set).String()
		if len(ports) > 1 {
			s = port + " " + s
		}
		if q, c := queues[port], len(set); q > c {
			s += fewerQueues(findNIC(in, port), port, q, c)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; "), nil
}

// fewerQueues says why q receive queues on c cores is worth changing
// (scaling.rst: no more queues than cores for interrupt handling), and
// is "" where the port's channels are c or fewer already: then the
// interrupts outnumber the queues in use, and lowering them again would
// change nothing.
func fewerQueues(n *inspect.NIC, port string, q, c int) string {
	set := setChannels(n, port, c)
	if set == "" {
		return ""
	}
	return fmt.Sprintf(" (%d receive queues on %d cores: %s, fewer queues than now, would give each queue a core of its own, as scaling.rst suggests)", q, c, set)
}

// setChannels is the ethtool -L that gives a port c receive queues, or
// "" where it has c or fewer now. The form is the one its channels have
// now (ethtool -l's current settings, inspect.Channels): ethtool -L keeps
// what it is not told, so "combined N" on a port set to rx/tx (bnxt and
// qede report both maximums) is refused or keeps the rx/tx ones, and
// qede's receive-only channels beside combined ones stay receive queues
// unless set to 0. Where no current count was read, the maximums choose:
// "combined" where it has queue pairs, "rx" and "tx" where its channels
// are separate (max combined 0: mlx4_en, sfc with separate_tx_channels),
// either said where they are unknown too.
func setChannels(n *inspect.NIC, port string, c int) string {
	var ch inspect.Channels
	if n != nil && n.Channels != nil {
		ch = *n.Channels
	}
	switch {
	case ch.Combined > 0:
		return setCombined(port, c, ch)
	case ch.RX > 0 && ch.RX <= c:
		return ""
	case ch.RX > 0:
		return setRxTx(port, c, ch.TX > 0)
	case ch.MaxCombined > 0:
		return fmt.Sprintf("ethtool -L %s combined %d", port, c)
	case ch.MaxRX > 0:
		return setRxTx(port, c, ch.MaxTX > 0)
	}
	return fmt.Sprintf("ethtool -L %s combined %d (or rx %d tx %d where ethtool -l %s shows no combined channels)", port, c, c, c, port)
}

// setCombined is setChannels for a port with combined channels now: c
// of them (no more than its maximum), its receive- and transmit-only
// ones (qede's) set to 0, or "" where its receive queues, combined and
// receive-only, are c or fewer.
func setCombined(port string, c int, ch inspect.Channels) string {
	if ch.Combined+ch.RX <= c {
		return ""
	}
	if ch.MaxCombined > 0 && c > ch.MaxCombined {
		c = ch.MaxCombined
	}
	set := fmt.Sprintf("ethtool -L %s combined %d", port, c)
	if ch.RX > 0 {
		set += " rx 0"
	}
	if ch.TX > 0 {
		set += " tx 0"
	}
	return set
}

// setRxTx is setChannels's separate form: rx c, and tx c where the port
// has transmit channels.
func setRxTx(port string, c int, tx bool) string {
	if tx {
		return fmt.Sprintf("ethtool -L %s rx %d tx %d", port, c, c)
	}
	return fmt.Sprintf("ethtool -L %s rx %d", port, c)
}

// irqSpreadScript is {irq_spread_script}: a shell script that finds each
// queue interrupt by name in /proc/interrupts and pins it.
func irqSpreadScript(in *inspect.Inspection) (string, error) {
	pins, err := irqPins(in)
	if err != nil {
		return "", err
	}
	lines := []string{
		"#!/bin/sh",
		"# Pin each queue interrupt to one NIC-local physical core (cnibench advise irq-spread).",
		"# Found by name: interrupt numbers change between boots.",
		`pin() { irq=$(awk -v n="$1" '$NF == n { sub(":", "", $1); print $1; exit }' /proc/interrupts)`,
		`        [ -n "$irq" ] && echo "$2" > /proc/irq/$irq/smp_affinity_list; }`,
	}
	for _, p := range pins {
		lines = append(lines, fmt.Sprintf("pin %s %d", p.name, p.cpu))
	}
	return strings.Join(lines, "\n"), nil
}

// irqPolicyScript is {irq_policy_script}: an irqbalance --policyscript
// that bans the pinned interrupts (irqbalance calls it with a device's
// sysfs path and an interrupt's number; "ban=true" leaves it alone), so
// irqbalance keeps balancing the others.
func irqPolicyScript(in *inspect.Inspection) (string, error) {
	pins, err := irqPins(in)
	if err != nil {
		return "", err
	}
	names := make([]string, len(pins))
	for i, p := range pins {
		names[i] = p.name
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.ContainsAny(n, "|*?[]'\" ") }) {
		return "", errors.New("an interrupt's name holds a shell pattern character")
	}
	return strings.Join([]string{
		"#!/bin/sh",
		"# irqbalance --policyscript: leave the interrupts cnibench-irq-spread pins alone.",
		`name=$(awk -v i="$2:" '$1 == i { print $NF; exit }' /proc/interrupts)`,
		`case "$name" in ` + strings.Join(names, "|") + ") echo ban=true;; esac",
	}, "\n"), nil
}
