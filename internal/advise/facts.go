package advise

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/cnitunnels"
	"github.com/cnibench/cnibench/internal/cpuset"
)

// A fact is a number or a yes/no read off an inspection; an error means
// the inspection could not tell (its reason).
type fact func(in *inspect.Inspection) (value, error)

type value struct {
	num    float64
	isBool bool
	yes    bool
	// note says what else was read that decided the value, for the
	// reasons the pages give ("reachable: C6 133 µs; PM QoS: ...").
	note string
}

func num(v float64) value { return value{num: v} }
func yes(b bool) value    { return value{isBool: true, yes: b} }

func (v value) String() string {
	if v.isBool {
		return strconv.FormatBool(v.yes)
	}
	return strconv.FormatFloat(v.num, 'g', 4, 64)
}

// facts are every fact name a rule may use, with what it reads.
var facts = map[string]fact{
	"cpus": func(in *inspect.Inspection) (value, error) { return num(float64(in.CPUs)), known(in, "cpus") },
	// numa_nodes: a run's record may lack it alone (a node's agent could not read its topology).
	"numa_nodes": func(in *inspect.Inspection) (value, error) {
		return num(float64(in.NUMANodes)), known(in, "cpus", "numa_nodes")
	},
	"rx_queues": func(in *inspect.Inspection) (value, error) {
		ns, err := nicDevs(in)
		if err == nil {
			err = knownEach(in, "queues", ns)
		}
		if err != nil {
			return value{}, err
		}
		q, _ := rxQueues(ns)
		return num(float64(q)), nil
	},
	// cores_per_rx_queue: CPUs per receive queue of the underlay NIC (of
	// all a bond's ports); at 2 or more, RSS leaves cores idle that
	// RPS/RFS can use (seed 000).
	"cores_per_rx_queue": func(in *inspect.Inspection) (value, error) {
		ns, err := nicDevs(in)
		if err == nil {
			err = known(in, "cpus")
		}
		if err == nil {
			err = knownEach(in, "queues", ns)
		}
		if err != nil {
			return value{}, err
		}
		q, err := rxQueues(ns)
		if err != nil {
			return value{}, err
		}
		return num(float64(in.CPUs) / float64(q)), nil
	},
	"rps_sock_flow_entries": sysctl(inspect.SysRPSSockFlowEntries),
	"busy_poll":             sysctl(inspect.SysBusyPoll),
	"busy_read":             sysctl(inspect.SysBusyRead),
	// idle_wake_slow: some CPU may still enter one of CPU 0's states
	// that is slow to leave (cpuidle.SlowWake) under the PM QoS limits
	// and haltpoll's poll window (idleWakeSlow).
	"idle_wake_slow": idleWakeSlow,
	"conntrack_max":  sysctl(inspect.SysConntrackMax),
	// conntrack_usage is the fraction of the conntrack table in use.
	"conntrack_usage": func(in *inspect.Inspection) (value, error) {
		if in.Unknown["sysctl "+inspect.SysConntrackMax] == inspect.NoConntrack {
			// No conntrack, no table to fill.
			v := num(0)
			v.note = "nf_conntrack not loaded"
			return v, nil
		}
		if err := known(in, "sysctl "+inspect.SysConntrackMax, "sysctl "+inspect.SysConntrackCount); err != nil {
			return value{}, err
		}
		m := in.Sysctls[inspect.SysConntrackMax]
		if m <= 0 {
			return value{}, errors.New("nf_conntrack_max is 0")
		}
		return num(float64(in.Sysctls[inspect.SysConntrackCount]) / float64(m)), nil
	},
	// rps_enabled: some queue of the underlay NIC (of any port) steers.
	"rps_enabled": func(in *inspect.Inspection) (value, error) {
		ns, err := nicDevs(in)
		if err != nil {
			return value{}, err
		}
		for _, n := range ns {
			for _, q := range n.Queues {
				if set, err := cpuset.ParseMask(q.RPSCPUs); err == nil && len(set) > 0 {
					return yes(true), nil
				}
			}
		}
		return yes(false), knownEach(in, "queues", ns)
	},
	// rfs_enabled: the global table and a flow count on the underlay (on
	// every port of a bond: a port without one does not steer).
	"rfs_enabled": func(in *inspect.Inspection) (value, error) {
		ns, err := nicDevs(in)
		if err == nil {
			err = known(in, "sysctl "+inspect.SysRPSSockFlowEntries)
		}
		if err == nil {
			err = knownEach(in, "queues", ns)
		}
		if err != nil {
			return value{}, err
		}
		on := in.Sysctls[inspect.SysRPSSockFlowEntries] > 0
		for _, n := range ns {
			port := false
			for _, q := range n.Queues {
				port = port || q.FlowCnt > 0
			}
			on = on && port
		}
		return yes(on), nil
	},
	// netfilter_rules: the larger of the iptables and nft views (they
	// overlap where iptables-nft is in use).
	"netfilter_rules": func(in *inspect.Inspection) (value, error) {
		e1, e2 := known(in, "iptables"), known(in, "nftables")
		if e1 != nil && e2 != nil {
			return value{}, fmt.Errorf("%v; %v", e1, e2)
		}
		return num(float64(max(in.Netfilter.IptablesRules, in.Netfilter.NftRules))), nil
	},
	"kernel_version":      kernelVersion,
	"kube_proxy_nftables": kubeProxyNftables,
	"overlay_in_use": func(in *inspect.Inspection) (value, error) {
		return yes(primaryTunnel(in) != nil), known(in, "devices")
	},
	// tunnel_encrypts: the overlay in use is WireGuard's. Its tunnel is
	// there to encrypt (Calico's and Cilium's WireGuard modes route pods
	// natively or over another overlay beneath it), so leaving it is a
	// security decision, not a performance knob, and no NIC offloads it.
	"tunnel_encrypts": func(in *inspect.Inspection) (value, error) {
		t := primaryTunnel(in)
		return yes(t != nil && t.Kind == "wireguard"), known(in, "devices")
	},
	// tunnel_offloaded: the underlay NIC segments the overlay's packets
	// (for VXLAN/Geneve tx-udp_tnl-segmentation, IP-in-IP
	// tx-ipxip4-segmentation, GRE tx-gre-segmentation).
	"tunnel_offloaded": func(in *inspect.Inspection) (value, error) {
		t, ns, err := tunnelAndNIC(in)
		if err != nil {
			return value{}, err
		}
		feat, ok := inspect.TunnelOffload[t.Kind]
		if !ok {
			return value{}, fmt.Errorf("no NIC offload exists for a %s tunnel", t.Kind)
		}
		return yes(allOn(ns, feat)), nil
	},
	// nic_offloads_other_overlay: the NIC offloads an overlay other than
	// the one in use that the CNI can carry pods in (overlay.go); unknown
	// for a CNI whose overlays cnibench does not know.
	"nic_offloads_other_overlay": func(in *inspect.Inspection) (value, error) {
		o, err := offloadedTargets(in)
		v := yes(len(o) > 0)
		v.note = noOtherOverlay[in.CNI.Name]
		return v, err
	},
	// tunnel_mtu_below_max: the overlay device's MTU, or one of the CNI's
	// pod links', is below what the underlay allows after the
	// encapsulation's overhead.
	"tunnel_mtu_below_max": func(in *inspect.Inspection) (value, error) {
		t := primaryTunnel(in)
		if t == nil {
			return yes(false), known(in, "devices")
		}
		target, err := targetMTU(in)
		if err != nil {
			return value{}, err
		}
		found, _, err := foundMTU(in)
		return yes(found < target), err
	},
	"pod_bridge_present": func(in *inspect.Inspection) (value, error) {
		_, ok := podBridge(in)
		return yes(ok), known(in, "devices")
	},
	// irq_spread_cores: the fewest cores irq-spread has to spread a
	// port's queue interrupts over (spreadCores): at 1 there is nothing
	// to spread, and matching the queues to it would shrink RSS to one.
	"irq_spread_cores": func(in *inspect.Inspection) (value, error) {
		ns, err := nics(in)
		if err == nil {
			err = known(in, "cpus")
		}
		if err != nil {
			return value{}, err
		}
		fewest := -1
		for _, n := range ns {
			c, err := spreadCores(in, n)
			if err != nil {
				return value{}, err
			}
			if fewest < 0 || len(c) < fewest {
				fewest = len(c)
			}
		}
		return num(float64(fewest)), nil
	},
	// queue_irqs_one_cpu: the underlay's receive queue interrupts (two or more,
	// over all a bond's ports) may all run on one and the same CPU only.
	"queue_irqs_one_cpu": func(in *inspect.Inspection) (value, error) {
		ns, err := nics(in)
		if err == nil {
			err = knownEach(in, "irqs", ns)
		}
		if err != nil {
			return value{}, err
		}
		cpus := map[string]bool{}
		queues := 0
		for _, n := range ns {
			for _, q := range n.IRQs {
				// Transmit-only interrupts are no receive queues; where
				// they sit says nothing of RSS's spread.
				if r := irqRole(n, q.Name); r == "rx" || r == "rxtx" {
					// An affinity the inspection could not read is
					// unknown, not a CPU of its own: "" beside the
					// others' "0" would read as two CPUs.
					if err := known(in, fmt.Sprintf("irq %d affinity", q.IRQ)); err != nil {
						return value{}, err
					}
					queues++
					cpus[q.CPUs] = true
				}
			}
		}
		if queues < 2 || len(cpus) != 1 {
			return yes(false), nil
		}
		for c := range cpus {
			set, err := cpuset.Parse(c)
			return yes(err == nil && len(set) == 1), nil
		}
		return yes(false), nil
	},
}

// FactNames lists the facts a rule may use, sorted.
func FactNames() []string {
	var out []string
	for n := range facts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// known returns the reasons of the first of keys the inspection could not read.
func known(in *inspect.Inspection, keys ...string) error {
	for _, k := range keys {
		if why, ok := in.Unknown[k]; ok {
			return fmt.Errorf("%s unknown: %s", k, why)
		}
	}
	return nil
}

func sysctl(name string) fact {
	return func(in *inspect.Inspection) (value, error) {
		if err := known(in, "sysctl "+name); err != nil {
			return value{}, err
		}
		v, ok := in.Sysctls[name]
		if !ok {
			return value{}, fmt.Errorf("%s not read", name)
		}
		return num(float64(v)), nil
	}
}

// underlayDev is the underlay device whether physical or virtual (a veth
// on a kind-style node, or a VLAN): what its MTU and name tell is true of
// both. Its queues and hardware are nicDevs' (the devices under it).
func underlayDev(in *inspect.Inspection) (*inspect.NIC, error) {
	if in.Underlay == "" {
		if err := known(in, "underlay"); err != nil {
			return nil, err
		}
		return nil, errors.New("no underlay device")
	}
	if n := findNIC(in, in.Underlay); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("underlay %s is neither a NIC nor a veth (a bridge or a tunnel)", in.Underlay)
}

// tunnelAndNIC returns the first tunnel and the underlay NICs (a bond's
// ports) with known offloads.
func tunnelAndNIC(in *inspect.Inspection) (*inspect.Device, []*inspect.NIC, error) {
	t := primaryTunnel(in)
	if t == nil {
		return nil, nil, errors.New("no tunnel device")
	}
	ns, err := nics(in)
	if err == nil {
		err = knownEach(in, "offloads", ns)
	}
	if err != nil {
		return nil, nil, err
	}
	return t, ns, nil
}

// targetMTU is the underlay's MTU less the largest overhead of the
// node's tunnels (tunnelOverhead).
func targetMTU(in *inspect.Inspection) (int, error) {
	n, err := underlayDev(in)
	if err != nil {
		return 0, err
	}
	if err := known(in, "mtu "+n.Name); err != nil {
		return 0, err
	}
	oh, _, err := tunnelOverhead(in)
	if err != nil {
		return 0, err
	}
	return n.MTU - oh, nil
}

// tunnelOverhead is the largest encapsulation overhead of the node's
// tunnels and the device that has it. A pod's packets may cross another
// tunnel than the overlay's (Calico VXLAN with WireGuard encryption; on
// a dual-stack node the IPv6 tunnel, whose outer header is 20 bytes
// longer): the pod MTU must fit the largest, or the packets that cross
// that one fragment. A module's idle fallback device does not count.
func tunnelOverhead(in *inspect.Inspection) (int, *inspect.Device, error) {
	t := primaryTunnel(in)
	if t == nil {
		return 0, nil, errors.New("no tunnel device")
	}
	oh, ok := t.EncapOverhead()
	if !ok {
		return 0, nil, fmt.Errorf("overhead of a %s tunnel unknown", t.Kind)
	}
	from := t
	for i, o := range in.Tunnels {
		if v, ok := o.EncapOverhead(); ok && v > oh && !slices.Contains(fallbackTunnels, o.Name) {
			oh, from = v, &in.Tunnels[i]
		}
	}
	return oh, from, nil
}

// fallbackTunnels are the devices the ipip, ip_gre and ip_vti modules
// create when they load (cnitunnels' fallbacks, and ip_vti0, which no CNI
// table holds); they carry traffic only when a CNI or a VPN routes over
// them.
var fallbackTunnels = append(cnitunnels.Fallbacks(), "ip_vti0")

// overlayKinds are the tunnel kinds CNIs carry pod traffic in. An IPsec
// VTI is none: no CNI cnibench knows makes one (their IPsec modes use
// xfrm policies without a device), a VTI on a node is a VPN's, and its
// overhead, ESP's, depends on the SA's cipher.
var overlayKinds = []string{"vxlan", "geneve", "ipip", "wireguard", "udp", "gre"}

// primaryTunnel is the overlay device pod traffic uses: the tunnel of the
// CNI's mode (Calico VXLAN nodes often have an idle tunl0 too), a CNI's
// own device before a module's fallback of the same kind (Flannel's
// flannel.ipip before tunl0, which Calico IP-in-IP uses itself) and the
// IPv4 one before a dual-stack node's IPv6 one (vxlan-v6.calico sorts
// before vxlan.calico), else the first that is not a module's fallback
// device; nil when there is none.
func primaryTunnel(in *inspect.Inspection) *inspect.Device {
	want := ""
	for _, k := range overlayKinds {
		if strings.HasPrefix(in.CNI.Mode, k) {
			want = k
		}
	}
	var best *inspect.Device
	for i, t := range in.Tunnels {
		if want != "" && t.Kind == want && (best == nil || tunnelRank(t) < tunnelRank(*best)) {
			best = &in.Tunnels[i]
		}
	}
	if best != nil {
		return best
	}
	for i, t := range in.Tunnels {
		if slices.Contains(overlayKinds, t.Kind) && !slices.Contains(fallbackTunnels, t.Name) && (best == nil || tunnelRank(t) < tunnelRank(*best)) {
			best = &in.Tunnels[i]
		}
	}
	return best
}

// tunnelRank orders tunnels, the likeliest to be the overlay first: a
// CNI's device before a module's fallback one, IPv4 before IPv6.
func tunnelRank(t inspect.Device) int {
	r := 0
	if slices.Contains(fallbackTunnels, t.Name) {
		r += 2
	}
	if t.IPv6 {
		r++
	}
	return r
}

// podBridges are the bridges CNIs and container runtimes attach pods to.
var podBridges = []string{"cni0", "cbr0", "kube-bridge", "weave", "docker0"}

func podBridge(in *inspect.Inspection) (string, bool) {
	for _, b := range in.Bridges {
		if slices.Contains(podBridges, b.Name) {
			return b.Name, true
		}
	}
	return "", false
}
