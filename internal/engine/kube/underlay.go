package kube

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
)

// FlannelAddrAnnotation is the address flanneld sends from (its --iface's,
// or --public-ip), which it records on its node.
const FlannelAddrAnnotation = "flannel.alpha.coreos.com/public-ip"

// underlayAgent is what findUnderlay asks of a node's agent.
type underlayAgent interface {
	AddrDev(ip string) (string, []string, error)
	LowerDev(tunnel string) (string, []string, error)
}

// underlay is a node's underlay device, the devices it is stacked on, and
// a note where it is not the device holding the node's InternalIP.
type underlay struct {
	dev       string
	stackedOn []string
	note      string
}

// findUnderlay is the NIC the CNI sends the node's pod traffic on, where
// RPS masks and underlay netem go: the tunnel's lower device where the
// agent can read one (a VXLAN's VTEP device: Flannel's --iface, felix's
// autodetected interface), else the device holding the CNI's own address
// of the node (Flannel's public-ip, Calico's IPv4Address annotation),
// else the device holding its InternalIP. A node with a management NIC
// holding the InternalIP and a data NIC the CNI uses would otherwise have
// the tunings steer a NIC that carries nothing measured. An agent that
// cannot say a tunnel's lower device (one older than the op) leaves the
// annotations to decide.
func findUnderlay(a underlayAgent, n *corev1.Node, tunnel string) (underlay, error) {
	var base underlay
	ip := NodeIP(n)
	if ip != "" {
		dev, below, err := a.AddrDev(ip)
		if err != nil {
			return base, fmt.Errorf("find the device holding %s: %w", ip, err)
		}
		base = underlay{dev: dev, stackedOn: below}
	}
	differs := func(u underlay, why string) (underlay, bool) {
		if u.dev == "" || u.dev == base.dev {
			return base, false
		}
		u.note = fmt.Sprintf("kube engine: node %s's underlay is %s, %s, not %s", n.Name, u.dev, why, orNone(base.dev, ip))
		return u, true
	}
	if tunnel != "" {
		if dev, below, err := a.LowerDev(tunnel); err == nil {
			if u, ok := differs(underlay{dev: dev, stackedOn: below}, "the device its tunnel "+tunnel+" sends through"); ok || dev != "" {
				return u, nil
			}
		}
	}
	for _, c := range cniAddrs(n) {
		if c.addr == ip {
			continue
		}
		if dev, below, err := a.AddrDev(c.addr); err == nil {
			if u, ok := differs(underlay{dev: dev, stackedOn: below}, "the device holding "+c.addr+" ("+c.from+")"); ok {
				return u, nil
			}
		}
	}
	return base, nil
}

// orNone names the InternalIP's device for findUnderlay's note.
func orNone(dev, ip string) string {
	if dev == "" {
		return "none (no InternalIP)"
	}
	return dev + ", which holds its InternalIP " + ip
}

// cniAddr is a node address a CNI records, and the annotation it is in.
type cniAddr struct{ addr, from string }

// cniAddrs are the addresses the CNIs record on the node as the one they
// send from: Flannel's public-ip, Calico's IPv4Address (an address with
// its interface's prefix).
func cniAddrs(n *corev1.Node) []cniAddr {
	var out []cniAddr
	for _, key := range []string{FlannelAddrAnnotation, cnidetect.CalicoAddrAnnotation} {
		v := strings.TrimSpace(n.Annotations[key])
		if p, err := netip.ParsePrefix(v); err == nil {
			v = p.Addr().String()
		}
		if _, err := netip.ParseAddr(v); err == nil {
			out = append(out, cniAddr{addr: v, from: "annotation " + key})
		}
	}
	return out
}
