package advise

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// SockFlowEntries is the global RFS table size proposed, unless the
// machine's is larger (sockFlowEntries): the value
// Documentation/networking/scaling.rst suggests for a moderately loaded
// server, and the one seed 000 used.
const SockFlowEntries = 32768

// params are the {placeholders} a rule's knobs and permanent forms may
// use, each filled from the inspection. A rule whose placeholder cannot
// be filled is reported unknown, never printed with a guess.
var params = map[string]func(in *inspect.Inspection) (string, error){
	// underlay is the default route's device (a macvlan's master);
	// nic the device its receive steering, interrupts and offloads live
	// on (the same one unless the underlay is a VLAN or macvlan; a bond's
	// ports as "eth0|eth1", see nicNames).
	"underlay": func(in *inspect.Inspection) (string, error) {
		n, err := underlayDev(in)
		if err != nil {
			return "", err
		}
		return n.Name, nil
	},
	"nic": func(in *inspect.Inspection) (string, error) {
		ns, err := nicDevs(in)
		if err != nil {
			return "", err
		}
		return nicNames(ns, "|"), nil
	},
	"underlay_mtu": func(in *inspect.Inspection) (string, error) {
		n, err := underlayDev(in)
		if err != nil {
			return "", err
		}
		return strconv.Itoa(n.MTU), known(in, "mtu "+n.Name)
	},
	"rx_queues": func(in *inspect.Inspection) (string, error) {
		ns, err := nicDevs(in)
		if err != nil {
			return "", err
		}
		q, err := rxQueues(ns)
		return strconv.Itoa(q), err
	},
	// idle_states: CPU 0's states other than polling that a governor
	// may still select under the PM QoS limits (reachable), with their
	// exit latencies: what cpu-idle keeps the cores out of.
	"idle_states": func(in *inspect.Inspection) (string, error) {
		if err := known(in, "cpuidle"); err != nil {
			return "", err
		}
		if in.CPUIdle == nil {
			return "", errors.New("no cpuidle driver")
		}
		states, _, err := reachable(in)
		if err != nil {
			return "", err
		}
		var out []string
		for _, s := range states {
			out = append(out, fmt.Sprintf("%s (%d µs)", s.Name, s.LatencyUS))
		}
		if len(out) == 0 {
			return "", errors.New("no idle state but polling is reachable")
		}
		return strings.Join(out, ", "), nil
	},
	"sock_flow_entries": func(in *inspect.Inspection) (string, error) { return strconv.Itoa(sockFlowEntries(in)), nil },
	// flow_cnt_per_queue: flowCntPerQueue.
	"flow_cnt_per_queue": func(in *inspect.Inspection) (string, error) { return flowCntPerQueue(in) },
	// rps_mask: each rx queue's RPS CPUs, those of its NUMA node
	// (rpsmask.go): one mask where all queues take the same, else queue
	// by queue; rps_commands, the udev rule's shell commands that set
	// them and the flow counts.
	"rps_mask": rpsMaskText,
	// irq_cores, irq_spread_script, irq_policy_script: where irq-spread
	// pins the queue interrupts and the scripts that do it (irqspread.go).
	"irq_cores":         irqCores,
	"irq_spread_script": irqSpreadScript,
	"irq_policy_script": irqPolicyScript,
	"rps_commands":      rpsCommands,
	"cpus": func(in *inspect.Inspection) (string, error) {
		if in.CPUs == 0 {
			return "", errors.New("CPU count unknown")
		}
		return strconv.Itoa(in.CPUs), nil
	},
	"tunnel": tunnelField(func(t inspect.Device) string { return t.Name }),
	// udev_nic and udev_tunnel: {nic} and {tunnel} as a udev rule's
	// NAME==/KERNEL== value, escaped (udevMatch).
	"udev_nic":    udevNIC,
	"udev_tunnel": udevTunnel,
	"tunnel_kind": tunnelField(func(t inspect.Device) string { return t.Kind }),
	"tunnel_mtu":  tunnelField(func(t inspect.Device) string { return strconv.Itoa(t.MTU) }),
	// found_mtu: the smallest MTU on the pods' path (the overlay's, or
	// the CNI's pod links' where lower); found_mtu_where, where it is.
	"found_mtu": func(in *inspect.Inspection) (string, error) {
		m, _, err := foundMTU(in)
		return strconv.Itoa(m), err
	},
	"found_mtu_where": func(in *inspect.Inspection) (string, error) {
		_, where, err := foundMTU(in)
		return where, err
	},
	// tunnel_datapath is the emulated datapath with the tunnel's
	// encapsulation, for an A/B of that overlay.
	"tunnel_datapath": func(in *inspect.Inspection) (string, error) {
		t := primaryTunnel(in)
		if t == nil {
			return "", errors.New("no tunnel device")
		}
		if d, ok := tunnelDatapath[t.Kind]; ok {
			return d, nil
		}
		return "", fmt.Errorf("no emulated datapath with a %s tunnel", t.Kind)
	},
	// overhead: the largest encapsulation overhead of the node's tunnels,
	// which target_mtu leaves room for; overhead_source, whose it is
	// ("vxlan over IPv6 (vxlan-v6.calico)").
	"overhead": func(in *inspect.Inspection) (string, error) {
		oh, _, err := tunnelOverhead(in)
		return strconv.Itoa(oh), err
	},
	"overhead_source": func(in *inspect.Inspection) (string, error) {
		_, t, err := tunnelOverhead(in)
		if err != nil {
			return "", err
		}
		return encap(*t) + " (" + t.Name + ")", nil
	},
	"target_mtu": func(in *inspect.Inspection) (string, error) {
		m, err := targetMTU(in)
		return strconv.Itoa(m), err
	},
	"offloaded_overlays": func(in *inspect.Inspection) (string, error) {
		o, err := offloadedTargets(in)
		if err == nil && len(o) == 0 {
			err = errors.New("the NIC offloads no other overlay the CNI has")
		}
		return strings.Join(o, ", "), err
	},
	// overlay_switch, overlay_firewall: the CNI's command to each of
	// those overlays and what firewalls must pass for it (overlay.go).
	"overlay_switch":   overlaySwitch,
	"overlay_firewall": overlayFirewall,
	// nic_numa_node: the NIC's NUMA node; a bond's ports must share one.
	"nic_numa_node": func(in *inspect.Inspection) (string, error) {
		ns, err := nics(in)
		if err != nil {
			return "", err
		}
		node := ns[0].NUMANode
		for _, n := range ns {
			if n.NUMANode < 0 {
				return "", fmt.Errorf("%s reports no NUMA node", n.Name)
			}
			if n.NUMANode != node {
				return "", fmt.Errorf("the bond's ports sit on different NUMA nodes (%s on %d, %s on %d)", ns[0].Name, node, n.Name, n.NUMANode)
			}
		}
		return strconv.Itoa(node), nil
	},
	"bridge": func(in *inspect.Inspection) (string, error) {
		if b, ok := podBridge(in); ok {
			return b, nil
		}
		return "", errors.New("no pod bridge")
	},
	"cni": func(in *inspect.Inspection) (string, error) { return cniString(in.CNI), nil },
	"conntrack_target": func(in *inspect.Inspection) (string, error) {
		t, err := conntrackTarget(in)
		return strconv.FormatInt(t, 10), err
	},
	"conntrack_buckets":      conntrackBuckets,
	"conntrack_buckets_now":  func(in *inspect.Inspection) (string, error) { return conntrackBucketsNow(in), nil },
	"conntrack_per_core":     conntrackPerCore,
	"kube_proxy_mode":        kubeProxyModeText,
	"netfilter_alternatives": netfilterAlternatives,
	"kube_proxy_config":      kubeProxyConfig,
	"netfilter_rules": func(in *inspect.Inspection) (string, error) {
		return strconv.Itoa(max(in.Netfilter.IptablesRules, in.Netfilter.NftRules)), nil
	},
}

// flowCntPerQueue is the global table (sockFlowEntries) shared out over
// the rx queues (scaling.rst: rps_flow_cnt = rps_sock_flow_entries / N;
// N counts every port of a bond, which share the table), rounded up to a
// power of two as the kernel rounds it (32768/6 = 5461 would silently
// become 8192).
func flowCntPerQueue(in *inspect.Inspection) (string, error) {
	ns, err := nicDevs(in)
	if err != nil {
		return "", err
	}
	q, err := rxQueues(ns)
	if err != nil {
		return "", err
	}
	v := 1
	for v < sockFlowEntries(in)/q {
		v <<= 1
	}
	return strconv.Itoa(v), nil
}

// sockFlowEntries is the global RFS table proposed: SockFlowEntries, or
// the table the machine already has where that is larger (rfs fires when
// some port has no flow count, whatever the table's size, and proposing
// 32768 over a table of 131072 would shrink it).
func sockFlowEntries(in *inspect.Inspection) int {
	return max(SockFlowEntries, int(in.Sysctls[inspect.SysRPSSockFlowEntries]))
}

// tunnelDatapath maps a tunnel kind to the datapath of cnibench's
// catalog that encapsulates the same way.
var tunnelDatapath = map[string]string{
	"vxlan": "calico-vxlan", "geneve": "geneve", "ipip": "calico-ipip",
	"gre": "gre", "wireguard": "wireguard", "udp": "flannel-udp",
}

func tunnelField(f func(inspect.Device) string) func(*inspect.Inspection) (string, error) {
	return func(in *inspect.Inspection) (string, error) {
		t := primaryTunnel(in)
		if t == nil {
			return "", errors.New("no tunnel device")
		}
		return f(*t), nil
	}
}

var placeholderRE = regexp.MustCompile(`\{([a-z_]+)\}`)

func checkPlaceholders(s string) error {
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		if _, ok := params[m[1]]; !ok {
			return fmt.Errorf("unknown placeholder {%s}", m[1])
		}
	}
	return nil
}

// fill replaces the placeholders of s.
func fill(s string, in *inspect.Inspection) (string, error) {
	var firstErr error
	out := placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		if paramNeedsMachine(in, name) {
			if firstErr == nil {
				firstErr = liveParam{name}
			}
			return ""
		}
		v, err := params[name](in)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("{%s}: %w", name, err)
		}
		return v
	})
	return out, firstErr
}
