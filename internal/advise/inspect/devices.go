package inspect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cnitunnels"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
)

// podPrefixes name the host sides of pod veths: Calico, Cilium, bridge CNIs.
var podPrefixes = []string{"cali", "lxc", "veth"}

// Overhead is the bytes an encapsulation adds to each packet over IPv4.
var Overhead = map[string]int{"vxlan": 50, "geneve": 50, "ipip": 20, "gre": 24, "wireguard": 60, "udp": 28}

// OverheadV6 is the same over IPv6, whose header is 40 bytes to IPv4's
// 20 (Calico felix: vxlanV6MTUOverhead 70, wireguardV6MTUOverhead 80).
var OverheadV6 = map[string]int{"vxlan": 70, "geneve": 70, "ipip": 40, "gre": 44, "wireguard": 80, "udp": 48}

// EncapOverhead is the bytes d's encapsulation adds to each packet, over
// IPv6 where d is an IPv6 tunnel; false for a kind of unknown overhead.
func (d Device) EncapOverhead() (int, bool) {
	m := Overhead
	if d.IPv6 {
		m = OverheadV6
	}
	v, ok := m[d.Kind]
	return v, ok
}

func (r reader) interrupts() ([]Interrupt, error) {
	b, err := os.ReadFile(r.path("proc/interrupts"))
	if err != nil {
		return nil, err
	}
	return ParseInterrupts(b)
}

func (r reader) classify(ctx context.Context, name string, irqs []Interrupt, irqErr error) {
	dir := "sys/class/net/" + name
	mtu, err := r.readInt(dir + "/mtu")
	if err != nil {
		r.unknown("mtu "+name, err)
	}
	if _, err := os.Stat(r.path(dir + "/device")); err == nil {
		r.nic(ctx, name, int(mtu), irqs, irqErr)
		return
	}
	if _, err := os.Stat(r.path(dir + "/bridge")); err == nil {
		r.in.Bridges = append(r.in.Bridges, Device{Name: name, Kind: "bridge", MTU: int(mtu)})
		return
	}
	if kind, v6 := r.tunnelKind(name); kind != "" {
		d := Device{Name: name, Kind: kind, IPv6: v6, MTU: int(mtu)}
		d.Offloads = r.features(ctx, name)
		r.in.Tunnels = append(r.in.Tunnels, d)
		return
	}
	if name == r.in.Underlay {
		r.virtualNIC(ctx, name, int(mtu))
		return
	}
	for _, p := range podPrefixes {
		if strings.HasPrefix(name, p) {
			r.podLink(p, int(mtu))
			return
		}
	}
}

// virtualNIC records an underlay that is not a physical device: a veth
// into a bridge, as on kind-style clusters and cnibench's own test
// cluster, whose nodes are network namespaces. Its queues take RPS and
// RFS like a NIC's; it has no interrupts, RSS or NUMA node, and rules
// that ask for hardware (NIC offloads, IRQ spread, NUMA) see it as no
// NIC at all.
func (r reader) virtualNIC(ctx context.Context, name string, mtu int) {
	n := NIC{Name: name, MTU: mtu, NUMANode: -1, Virtual: true}
	r.queues(&n)
	n.Offloads = r.features(ctx, name)
	r.in.NICs = append(r.in.NICs, n)
}

// tunnelKind is a device's tunnel kind ("" for none) and whether it is
// a CNI's IPv6 tunnel. The names CNIs and kernel modules give their
// tunnels tell first (internal/cnitunnels: Flannel's ipip backend names
// its Iptun flannel.ipip, its vxlan backend flannel.<VNI>; a dual-stack
// node's second device, Calico felix's vxlan-v6.calico and wg-v6.cali,
// Flannel's flannel-v6.<VNI> and flannel-wg-v6, carries IPv6); other
// devices are told by their sysfs DEVTYPE or link type.
func (r reader) tunnelKind(name string) (kind string, v6 bool) {
	if d, ok := cnitunnels.Lookup(name); ok {
		return d.Encap, d.IPv6
	}
	ue, _ := r.read("sys/class/net/" + name + "/uevent")
	for _, line := range strings.Split(ue, "\n") {
		if v, ok := strings.CutPrefix(line, "DEVTYPE="); ok {
			switch v {
			case "vxlan", "geneve", "wireguard":
				return v, false
			}
		}
	}
	switch t, _ := r.read("sys/class/net/" + name + "/type"); t {
	case "768": // ARPHRD_TUNNEL: IP-in-IP, or an IPsec VTI
		if isVTI(name, r.kinds[name]) {
			return "vti", false
		}
		return "ipip", false
	case "778": // ARPHRD_IPGRE
		return "gre", false
	}
	return "", false
}

// isVTI tells an IPsec VTI (ip_vti) from an IP-in-IP device, which sysfs
// shows alike: by its link kind where known, else by name (the module's
// fallback ip_vti0; vti<N>, as strongSwan's and libreswan's guides name
// theirs).
func isVTI(name, kind string) bool {
	if kind != "" {
		return strings.HasPrefix(kind, "vti")
	}
	return name == "ip_vti0" || strings.HasPrefix(name, "vti")
}

func (r reader) podLink(prefix string, mtu int) {
	for i := range r.in.PodLinks {
		g := &r.in.PodLinks[i]
		if g.Prefix == prefix {
			g.Count++
			g.MinMTU, g.MaxMTU = min(g.MinMTU, mtu), max(g.MaxMTU, mtu)
			return
		}
	}
	r.in.PodLinks = append(r.in.PodLinks, LinkGroup{Prefix: prefix, Count: 1, MinMTU: mtu, MaxMTU: mtu})
}

func (r reader) nic(ctx context.Context, name string, mtu int, irqs []Interrupt, irqErr error) {
	dir := "sys/class/net/" + name
	n := NIC{Name: name, MTU: mtu, NUMANode: -1}
	if v, err := r.readInt(dir + "/device/numa_node"); err == nil {
		n.NUMANode = int(v)
	}
	if drv, err := filepath.EvalSymlinks(r.path(dir + "/device/driver")); err == nil {
		n.Driver = filepath.Base(drv)
	}
	r.queues(&n)
	if irqErr != nil {
		r.unknown("irqs "+name, irqErr)
	} else {
		n.IRQs = r.nicIRQs(name, irqs)
	}
	n.Offloads = r.features(ctx, name)
	if r.env.Run == nil {
		r.unknown("rss "+name, errors.New("no command runner"))
	} else if out, err := r.env.Run.Run(ctx, []string{"ethtool", "-x", name}); err != nil {
		r.unknown("rss "+name, err)
	} else if rss, err := ParseRSS(out); err != nil {
		r.unknown("rss "+name, err)
	} else {
		n.RSS = &rss
	}
	r.channels(ctx, &n)
	r.in.NICs = append(r.in.NICs, n)
}

// channels reads ethtool -l: whether the driver takes combined or
// separate rx/tx channels, for irq-spread's ethtool -L.
func (r reader) channels(ctx context.Context, n *NIC) {
	if r.env.Run == nil {
		r.unknown("channels "+n.Name, errors.New("no command runner"))
		return
	}
	out, err := r.env.Run.Run(ctx, []string{"ethtool", "-l", n.Name})
	if err == nil {
		var ch Channels
		if ch, err = ParseChannels(out); err == nil {
			n.Channels = &ch
			return
		}
	}
	r.unknown("channels "+n.Name, err)
}

// queues reads a device's rx and tx queues and each rx queue's RPS mask
// and RFS flow count.
func (r reader) queues(n *NIC) {
	dir := "sys/class/net/" + n.Name
	qs, err := os.ReadDir(r.path(dir + "/queues"))
	if err != nil {
		r.unknown("queues "+n.Name, err)
	}
	for _, q := range qs {
		switch {
		case strings.HasPrefix(q.Name(), "tx-"):
			n.TxQueues++
		case strings.HasPrefix(q.Name(), "rx-"):
			n.RxQueues++
			rq := RxQueue{Name: q.Name()}
			qd := dir + "/queues/" + q.Name()
			if s, err := r.read(qd + "/rps_cpus"); err == nil {
				rq.RPSCPUs = s
			} else {
				r.unknown("rps_cpus "+n.Name+" "+q.Name(), err)
			}
			if v, err := r.readInt(qd + "/rps_flow_cnt"); err == nil {
				rq.FlowCnt = int(v)
			} else {
				r.unknown("rps_flow_cnt "+n.Name+" "+q.Name(), err)
			}
			n.Queues = append(n.Queues, rq)
		}
	}
	sort.Slice(n.Queues, func(i, j int) bool { return queueIndex(n.Queues[i].Name) < queueIndex(n.Queues[j].Name) })
}

func queueIndex(q string) int {
	i, _ := strconv.Atoi(q[strings.IndexByte(q, '-')+1:])
	return i
}

// nicIRQs finds a NIC's interrupts: those its PCI function lists in
// msi_irqs (the device's own directory or, for virtio, its parent's), or
// those whose name carries the device's name.
func (r reader) nicIRQs(name string, irqs []Interrupt) []IRQ {
	mine := map[int]bool{}
	dev := r.path("sys/class/net/" + name + "/device")
	if p, err := filepath.EvalSymlinks(dev); err == nil {
		dev = p
	}
	for _, d := range []string{dev, filepath.Dir(dev)} {
		ents, err := os.ReadDir(filepath.Join(d, "msi_irqs"))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if v, err := strconv.Atoi(e.Name()); err == nil {
				mine[v] = true
			}
		}
		break
	}
	var out []IRQ
	for _, it := range irqs {
		if !mine[it.IRQ] && !irqOf(it.Name, name) {
			continue
		}
		q := IRQ{IRQ: it.IRQ, Name: it.Name}
		s, err := r.read(fmt.Sprintf("proc/irq/%d/smp_affinity_list", it.IRQ))
		if err != nil {
			r.unknown(fmt.Sprintf("irq %d affinity", it.IRQ), err)
		}
		q.CPUs = s
		out = append(out, q)
	}
	return out
}

// features runs ethtool -k on a device.
func (r reader) features(ctx context.Context, name string) map[string]Offload {
	if r.env.Run == nil {
		r.unknown("offloads "+name, errors.New("no command runner"))
		return nil
	}
	out, err := r.env.Run.Run(ctx, []string{"ethtool", "-k", name})
	if err != nil {
		r.unknown("offloads "+name, err)
		return nil
	}
	m, err := ParseFeatures(out)
	if err != nil {
		r.unknown("offloads "+name, err)
		return nil
	}
	kept := map[string]Offload{}
	for _, f := range Features {
		if o, ok := m[f]; ok {
			kept[f] = o
		}
	}
	return kept
}

// Features are the offloads an inspection keeps (ethtool -k names):
// receive and segmentation offloads, and the tunnel segmentation
// offloads that decide which overlay the NIC can carry cheaply.
var Features = []string{
	FeatGRO, FeatGSO, FeatTSO, FeatGROHW, "large-receive-offload", "rx-checksumming", "tx-checksumming",
	FeatUDPTunnel, FeatUDPTunnelCsum, FeatGRE, "tx-gre-csum-segmentation", FeatIPIP, "tx-ipxip6-segmentation",
	"tx-udp-segmentation", "rx-udp-gro-forwarding", "rx-gro-list", "rx-udp_tunnel-port-offload", "receive-hashing", "ntuple-filters",
}

// Feature names rules refer to.
const (
	FeatGRO           = "generic-receive-offload"
	FeatGSO           = "generic-segmentation-offload"
	FeatTSO           = "tcp-segmentation-offload"
	FeatGROHW         = "rx-gro-hw"
	FeatUDPTunnel     = "tx-udp_tnl-segmentation"
	FeatUDPTunnelCsum = "tx-udp_tnl-csum-segmentation"
	FeatGRE           = "tx-gre-segmentation"
	FeatIPIP          = "tx-ipxip4-segmentation"
)

// TunnelOffload is the NIC feature that segments each overlay's packets.
var TunnelOffload = map[string]string{"vxlan": FeatUDPTunnel, "geneve": FeatUDPTunnel, "ipip": FeatIPIP, "gre": FeatGRE}

func (r reader) netfilter(ctx context.Context, links []string) {
	if r.env.Run == nil {
		r.unknown("iptables", errors.New("no command runner"))
		r.unknown("nftables", errors.New("no command runner"))
		return
	}
	var ipt *iptables.Ruleset
	var nft *nftables.Ruleset
	if out, err := r.env.Run.Run(ctx, []string{"iptables-save", "-c"}); err != nil {
		r.unknown("iptables", err)
	} else if rs, err := iptables.Parse(out); err != nil {
		r.unknown("iptables", err)
	} else {
		ipt = rs
		r.in.Netfilter.IptablesChains, r.in.Netfilter.IptablesRules = len(rs.Chains), len(rs.Rules)
	}
	if out, err := r.env.Run.Run(ctx, []string{"nft", "-j", "list", "ruleset"}); err != nil {
		r.unknown("nftables", err)
	} else if rs, err := nftables.Parse(out); err != nil {
		r.unknown("nftables", err)
	} else {
		nft = rs
		r.in.Netfilter.NftChains, r.in.Netfilter.NftRules = len(rs.Chains), len(rs.Rules)
	}
	r.in.Netfilter.KubeProxy = kubeProxyMode(ipt, nft, links)
}

func detectCNI(conf map[string]string, links []string) cnidetect.Result {
	return cnidetect.Detect(cnidetect.Input{ConfFiles: conf, Links: links})
}

// netlinkKinds maps every device of this namespace to its link kind
// (equivalent to `ip -d link show`, the kind after the flags).
func netlinkKinds() (map[string]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	out := map[string]string{}
	for _, l := range links {
		out[l.Attrs().Name] = l.Type()
	}
	return out, nil
}

// netlinkQdiscs lists the root qdisc of every device of this namespace
// (equivalent to `tc qdisc show`, root lines only).
func netlinkQdiscs() (map[string]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	out := map[string]string{}
	for _, l := range links {
		qs, err := netlink.QdiscList(l)
		if err != nil {
			return nil, fmt.Errorf("qdiscs of %s: %w", l.Attrs().Name, err)
		}
		for _, q := range qs {
			if q.Attrs().Parent == netlink.HANDLE_ROOT {
				out[l.Attrs().Name] = q.Type()
			}
		}
	}
	return out, nil
}

// irqOf says whether an interrupt's name in /proc/interrupts is device
// dev's: the name itself, or the name followed by a queue suffix
// (eth1-TxRx-0, eth1@pci...). A substring would give eth1 eth10's.
func irqOf(irqName, dev string) bool {
	rest, ok := strings.CutPrefix(irqName, dev)
	return ok && (rest == "" || rest[0] == '-' || rest[0] == '@' || rest[0] == ':')
}
