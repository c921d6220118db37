package advise

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/cpuset"
)

// RPS CPUs by NUMA node. Documentation/networking/scaling.rst (RPS
// Configuration, "Suggested Configuration"): "If there are fewer
// hardware queues than CPUs, then RPS might be beneficial if the
// rps_cpus for each queue are the ones that share the same memory
// domain as the interrupting CPU for that queue." A mask of every CPU
// would steer a queue's packets across the interconnect on a machine of
// two nodes, the cost numa-placement proposes to avoid. So each queue
// steers to the CPUs of the node its interrupt runs on; where that is
// not known, the NIC's own node (sysfs numa_node); and only on one node,
// or where neither is known (a veth underlay, an inspection from before
// the nodes' CPUs were read), to every online CPU.

// queueMask is one rx queue's RPS CPUs.
type queueMask struct {
	port, queue string
	cpus        cpuset.Set
}

// rpsMasks are the RPS CPUs of every rx queue of the underlay's NICs (a
// bond's ports), port by port in queue order.
func rpsMasks(in *inspect.Inspection) ([]queueMask, error) {
	online, err := onlineCPUs(in)
	if err != nil {
		return nil, err
	}
	ns, err := nicDevs(in)
	if err != nil {
		return nil, err
	}
	var out []queueMask
	for _, n := range ns {
		queues := n.Queues
		if len(queues) == 0 {
			for i := range n.RxQueues {
				queues = append(queues, inspect.RxQueue{Name: "rx-" + strconv.Itoa(i)})
			}
		}
		for _, q := range queues {
			out = append(out, queueMask{port: n.Name, queue: q.Name, cpus: queueCPUs(in, n, q.Name, online)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rx queues in sysfs", nicNames(ns, ", "))
	}
	return out, nil
}

// onlineCPUs are the online CPUs (inspections of older versions carry
// the count alone: 0..CPUs-1).
func onlineCPUs(in *inspect.Inspection) (cpuset.Set, error) {
	if in.CPUs == 0 {
		return nil, errors.New("CPU count unknown")
	}
	if in.OnlineCPUs == "" {
		return cpuset.Range(in.CPUs), nil
	}
	s, err := cpuset.Parse(in.OnlineCPUs)
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	return s, nil
}

// queueCPUs are one queue's RPS CPUs: the online CPUs of the node its
// interrupt is affine to, else of the NIC's node, else all online CPUs.
func queueCPUs(in *inspect.Inspection, n *inspect.NIC, queue string, online cpuset.Set) cpuset.Set {
	if in.NUMANodes < 2 || len(in.NodeCPUs) < 2 {
		return online
	}
	node := irqNode(in, n, queueIndex(queue))
	if node < 0 {
		node = n.NUMANode
	}
	cpus, err := cpuset.Parse(in.NodeCPUs[node])
	if node < 0 || err != nil {
		return online
	}
	var out cpuset.Set
	for _, c := range cpus {
		if online.Contains(c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return online
	}
	return out
}

// irqNode is the NUMA node of the CPUs queue i's interrupt may run on
// (smp_affinity_list): the queue interrupts whose name ends in the
// queue's number ("mlx5_comp3@pci:...", "eth0-TxRx-3", "virtio2-input.3",
// "ena-io-3"), transmit-only ones left out; -1 when there is none, or
// when their CPUs span nodes (then the NIC's node decides).
func irqNode(in *inspect.Inspection, n *inspect.NIC, i int) int {
	nodeOf := map[int]int{}
	for node, list := range in.NodeCPUs {
		cpus, err := cpuset.Parse(list)
		if err != nil {
			return -1
		}
		for _, c := range cpus {
			nodeOf[c] = node
		}
	}
	node := -1
	for _, q := range n.IRQs {
		if r, num := irqClass(n, q.Name); num != i || (r != "rx" && r != "rxtx") {
			continue
		}
		cpus, err := cpuset.Parse(q.CPUs)
		if err != nil || len(cpus) == 0 {
			return -1
		}
		for _, c := range cpus {
			nd, ok := nodeOf[c]
			if !ok || (node >= 0 && nd != node) {
				return -1
			}
			node = nd
		}
	}
	return node
}

// irqQueue is the queue number at the end of an interrupt's name (before
// a "@pci:..." suffix); -1 without one.
func irqQueue(name string) int {
	name, _, _ = strings.Cut(name, "@")
	end := len(name)
	for end > 0 && !unicode.IsDigit(rune(name[end-1])) {
		end--
	}
	start := end
	for start > 0 && unicode.IsDigit(rune(name[start-1])) {
		start--
	}
	v, err := strconv.Atoi(name[start:end])
	if err != nil || end != len(name) {
		return -1
	}
	return v
}

// queueIndex is an rx queue's number ("rx-3" is 3).
func queueIndex(q string) int {
	v, err := strconv.Atoi(strings.TrimPrefix(q, "rx-"))
	if err != nil {
		return -1
	}
	return v
}

// rpsMaskText is {rps_mask}: the one mask every queue gets, or where
// queues differ each queue's ("rx-0:0000ff00 rx-1:00ff0000", named by
// port too on a bond: "eth0/rx-0:...").
func rpsMaskText(in *inspect.Inspection) (string, error) {
	ms, err := rpsMasks(in)
	if err != nil {
		return "", err
	}
	if uniform(ms) {
		return ms[0].cpus.Mask(in.CPUs), nil
	}
	ports := map[string]bool{}
	for _, m := range ms {
		ports[m.port] = true
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.queue + ":" + m.cpus.Mask(in.CPUs)
		if len(ports) > 1 {
			parts[i] = m.port + "/" + parts[i]
		}
	}
	return strings.Join(parts, " "), nil
}

// rpsCommands is {rps_commands}: the shell commands a udev rule runs in
// /sys/class/net/$name/queues to set each queue's rps_cpus and
// rps_flow_cnt, one loop where every queue takes the same mask, a line
// per queue where they differ (per port on a bond, by its name). udev
// substitutes $ in RUN itself, so the shell's $q is written $$q. The
// device's name comes as the script's $1 (the rule passes udev's $name,
// the name after renaming, as an argument): substituted into the
// script's text, a name holding shell syntax (";", "$(...)", all valid
// in an interface name) would run as commands.
func rpsCommands(in *inspect.Inspection) (string, error) {
	ms, err := rpsMasks(in)
	if err != nil {
		return "", err
	}
	flow, err := flowCntPerQueue(in)
	if err != nil {
		return "", err
	}
	flows := "for q in rx-*; do echo " + flow + " > $$q/rps_flow_cnt; done"
	if uniform(ms) {
		return "for q in rx-*; do echo " + ms[0].cpus.Mask(in.CPUs) + " > $$q/rps_cpus; echo " + flow + " > $$q/rps_flow_cnt; done", nil
	}
	byPort := map[string][]string{}
	var ports []string
	for _, m := range ms {
		if byPort[m.port] == nil {
			ports = append(ports, m.port)
		}
		byPort[m.port] = append(byPort[m.port], "echo "+m.cpus.Mask(in.CPUs)+" > "+m.queue+"/rps_cpus;")
	}
	if len(ports) == 1 {
		return strings.Join(byPort[ports[0]], " ") + " " + flows, nil
	}
	var cmds []string
	for _, p := range ports {
		cmds = append(cmds, `[ \"$$1\" = `+udevShellWord(p)+" ] && { "+strings.Join(byPort[p], " ")+" };")
	}
	return strings.Join(cmds, " ") + " " + flows, nil
}

// uniform reports whether every queue takes the same CPUs.
func uniform(ms []queueMask) bool {
	for _, m := range ms[1:] {
		if m.cpus.String() != ms[0].cpus.String() {
			return false
		}
	}
	return true
}
